"""Installs the polygrad Python package with a copy of the built libpolygrad and its plugins.

The C++ core is built by CMake first; this script only copies its outputs into the package
(polygrad/_lib/libpolygrad.so, polygrad/_lib/polygrad/plugins/*.so: the plugins, polygrad_*.so,
and the libraries a plugin loads from its own folder, libpolygrad_*.so, such as the wasm
plugin's v8 engine), where the package and libpolygrad's own plugin discovery
(<libdir>/polygrad/plugins) find them. The build directory
is POLYGRAD_BUILD_DIR, default <repo>/build/release.
"""
import glob
import os
import shutil

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


def _build_dir():
    d = os.environ.get("POLYGRAD_BUILD_DIR") or os.path.join(REPO, "build", "release")
    return os.path.abspath(d if os.path.isabs(d) else os.path.join(REPO, d))


class BuildPyWithLib(build_py):
    """build_py that also copies libpolygrad.so and the plugins into polygrad/_lib."""

    def run(self):
        super().run()
        build = _build_dir()
        lib = os.path.join(build, "lib", "libpolygrad.so")
        folder = os.path.join(build, "lib", "polygrad", "plugins")
        plugins = sorted(glob.glob(os.path.join(folder, "polygrad_*.so")))
        # libraries that plugins load from their own folder (libpolygrad_wasm_v8.so, the cuda
        # and cpu_clang plugins' compiler libraries)
        beside = sorted(glob.glob(os.path.join(folder, "libpolygrad_*.so")))
        if not os.path.isfile(lib):
            raise SystemExit(f"polygrad: {lib} does not exist. Build the C++ core first "
                             f"(cmake --preset release && cmake --build build/release), or set "
                             f"POLYGRAD_BUILD_DIR to a build directory that holds lib/libpolygrad.so.")
        if not plugins:
            raise SystemExit(f"polygrad: no plugin in {build}/lib/polygrad/plugins: build the "
                             f"cpu_clang target.")
        dest = os.path.join(self.build_lib, "polygrad", "_lib")
        shutil.rmtree(dest, ignore_errors=True)
        os.makedirs(os.path.join(dest, "polygrad", "plugins"))
        shutil.copy2(os.path.realpath(lib), os.path.join(dest, "libpolygrad.so"))
        for p in plugins + beside:
            shutil.copy2(os.path.realpath(p), os.path.join(dest, "polygrad", "plugins",
                                                           os.path.basename(p)))


setup(
    name="polygrad",
    version="0.1.0",
    description="Lazy tensors, autograd and nn over libpolygrad's C API",
    packages=["polygrad", "polygrad.nn"],
    python_requires=">=3.9",
    install_requires=["numpy"],
    cmdclass={"build_py": BuildPyWithLib},
    zip_safe=False,
)
