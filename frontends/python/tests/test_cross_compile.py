"""POLYGRAD_CROSS_COMPILE: every kernel a run compiles for its device is also rendered (and
compiled, where the plugin can) for a second plugin's target and written to
POLYGRAD_CROSS_COMPILE_DIR. The variables are read by the library, so each case runs a
process of its own."""
import os
import re
import struct
import subprocess
import sys

import pytest

from polygrad import Device

# Each case's process computes on the cpu device.
pytestmark = pytest.mark.needs_cpu

# Three kinds of kernel (elementwise, reduce, matmul), each value checked against numpy.
SCRIPT = """
import numpy as np
from polygrad import Tensor
a = np.arange(12, dtype=np.float32).reshape(3, 4)
b = np.arange(20, dtype=np.float32).reshape(4, 5) / 7
x, y = Tensor(a), Tensor(b)
np.testing.assert_allclose((x * 2 + 1).numpy(), a * 2 + 1)
np.testing.assert_allclose(x.sum(1).numpy(), a.sum(1))
np.testing.assert_allclose((x @ y).numpy(), a @ b, rtol=1e-5)
print("values ok")
"""


def run(spec, out_dir, device="cpu"):
    env = dict(os.environ, POLYGRAD_DEVICE=device, POLYGRAD_DEBUG="3",
               POLYGRAD_CROSS_COMPILE=spec, POLYGRAD_CROSS_COMPILE_DIR=str(out_dir))
    # (DEBUG=3 prints each artifact, and gpu_emu's are bytes)
    r = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True,
                       encoding="utf-8", errors="replace", timeout=300)
    # POLYGRAD_DEBUG=3: a line for each kernel compiled for the real device.
    compiled = sorted(re.findall(r"^polygrad: kernel (\w+) on %s:0:$" % device, r.stderr, re.M))
    return r, compiled


def fnv_fold(data):
    h = 1469598103934665603
    for byte in data:
        h = ((h ^ byte) * 1099511628211) % 2**64
    return "%08x" % ((h ^ (h >> 32)) & 0xFFFFFFFF)


def files(out_dir, ext):
    """(kernel, digest, bytes) of each <kernel>-<digest><ext>, sorted."""
    found = []
    for f in out_dir.glob("*" + ext):
        kernel, digest = f.name[:-len(ext)].rsplit("-", 1)
        found.append((kernel, digest, f.read_bytes()))
    return sorted(found)


@pytest.mark.skipif("emu:0" not in Device.list(), reason="the gpu_emu plugin is not built")
def test_gpu_emu_renders_every_kernel(tmp_path):
    r, on_cpu = run("gpu_emu", tmp_path)
    assert r.returncode == 0 and "values ok" in r.stdout, r.stderr
    assert len(on_cpu) >= 3, r.stderr  # at least one kernel per op
    # gpu_emu renders (PG_ARTIFACT_OTHER: .bin) and has no compile: one file per kernel.
    rendered = files(tmp_path, ".bin")
    assert len(list(tmp_path.iterdir())) == len(rendered) == len(on_cpu)
    for kernel, digest, data in rendered:
        assert data and digest == fnv_fold(data), kernel
    # Lowered with the emulator's capabilities (groups), not the CPU's: the kernels are those
    # a run on the emulator compiles, which differ here from the CPU's.
    r, on_emu = run("", tmp_path / "unused", device="emu")
    assert r.returncode == 0 and "values ok" in r.stdout, r.stderr
    assert [kernel for kernel, _, _ in rendered] == on_emu != on_cpu
    assert not (tmp_path / "unused").exists()  # an empty POLYGRAD_CROSS_COMPILE is off


def test_cpu_clang_renders_and_compiles(tmp_path):
    r, compiled = run("cpu_clang", tmp_path)
    assert r.returncode == 0 and "values ok" in r.stdout, r.stderr
    assert len(compiled) >= 3, r.stderr
    sources, objects = files(tmp_path, ".c"), files(tmp_path, ".o")
    assert [kernel for kernel, _, _ in sources] == compiled
    assert [(k, d) for k, d, _ in objects] == [(k, d) for k, d, _ in sources]
    for (kernel, digest, text), (_, _, obj) in zip(sources, objects):
        assert digest == fnv_fold(text) and kernel.encode() in text
        # an ELF relocatable object (e_type 1) that names the kernel
        assert obj[:4] == b"\x7fELF" and struct.unpack_from("<H", obj, 16)[0] == 1
        assert kernel.encode() + b"\0" in obj
        # Float32 kernels: none of the 16-bit float helpers the renderer keeps for kernels that
        # call them (sdk/cstyle/src/prelude.cpp).
        assert b"pg_to_small_float" not in text and b"pg_f16_to_f32" not in text, kernel


def test_unknown_plugin_names_kernel_plugin_and_arch(tmp_path):
    r, _ = run("nosuchplugin:sm_90", tmp_path)
    assert r.returncode != 0
    assert re.search(r"\[cross-compile\] kernel \w+ for plugin nosuchplugin, arch sm_90 "
                     r"\(POLYGRAD_CROSS_COMPILE=nosuchplugin:sm_90\): .*no loaded plugin named "
                     r"'nosuchplugin'", r.stderr), r.stderr
    assert not list(tmp_path.iterdir())


def test_unsupported_arch_is_an_error(tmp_path):
    r, _ = run("gpu_emu:sm_90", tmp_path)
    assert r.returncode != 0
    assert re.search(r"kernel \w+ for plugin gpu_emu, arch sm_90 .*compiles for '\w+' only, "
                     r"not 'sm_90'", r.stderr), r.stderr


@pytest.mark.skipif("wasm:0" not in Device.list(), reason="the wasm plugin is not built")
def test_a_dtype_the_target_lacks_is_skipped_not_an_error(tmp_path):
    """wasm declares no float16: a float16 kernel is not its to build (its device would refuse
    it); the float32 kernels of the same run are rendered."""
    env = dict(os.environ, POLYGRAD_DEVICE="cpu", POLYGRAD_CROSS_COMPILE="wasm",
               POLYGRAD_CROSS_COMPILE_DIR=str(tmp_path))
    script = ("import numpy as np\nfrom polygrad import Tensor\n"
              "h = np.arange(8, dtype=np.float16)\n"
              "assert ((Tensor(h) * 2).numpy() == h * 2).all()\n"
              "f = np.arange(8, dtype=np.float32)\n"
              "assert ((Tensor(f) + 1).numpy() == f + 1).all()\nprint('ok')\n")
    r = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                       encoding="utf-8", errors="replace", timeout=300)
    assert r.returncode == 0 and "ok" in r.stdout, r.stderr
    modules = list(tmp_path.glob("*.wasm"))
    assert len(modules) == 1, [m.name for m in modules]


def _cuda_plugin_loaded():
    return any("polygrad_cuda.so" in line and "loaded" in line
               for line in Device.report().splitlines())


@pytest.mark.skipif("emu:0" not in Device.list() or not _cuda_plugin_loaded(),
                    reason="needs the gpu_emu and cuda plugins")
def test_wide_half_products_take_tensor_cores_with_32_bit_indices(tmp_path):
    """A product 4096 wide lowered for sm_90: its row count, the launch variable n0, is declared
    up to the most that keeps every offset 32-bit, so the tensor-core plan applies (with n0 up
    to INT32_MAX its group count was one over the launch limit, and each output took a thread
    of its own) and the kernel's index math is int."""
    script = ("import numpy as np\nfrom polygrad import Tensor\n"
              "rng = np.random.default_rng(0)\n"
              "a = rng.uniform(-1, 1, (64, 64)).astype(np.float16)\n"
              "b = rng.uniform(-1, 1, (64, 4096)).astype(np.float16)\n"
              "got = (Tensor(a) @ Tensor(b)).numpy().astype(np.float32)\n"
              "want = a.astype(np.float32) @ b.astype(np.float32)\n"
              "np.testing.assert_allclose(got, want, rtol=2e-2, atol=2e-2)\nprint('ok')\n")
    env = dict(os.environ, POLYGRAD_DEVICE="emu", POLYGRAD_CROSS_COMPILE="cuda:sm_90",
               POLYGRAD_CROSS_COMPILE_DIR=str(tmp_path), POLYGRAD_PROGRAM_CACHE="off")
    r = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                       encoding="utf-8", errors="replace", timeout=300)
    assert r.returncode == 0 and "ok" in r.stdout, r.stderr
    products = [f.read_text() for f in tmp_path.glob("r_*.cu") if "mma.sync" in f.read_text()]
    assert len(products) == 1, sorted(f.name for f in tmp_path.iterdir())
    body = products[0].split("__global__", 1)[1]
    assert "long long pg_s0" in body and "const int v" in body
    assert "long long v" not in body  # (only the size parameter itself is 64-bit)
