#!/usr/bin/env bash
# Makes a self-contained folder from a build made here, for a GPU machine that has the NVIDIA
# driver, the CUDA toolkit, python3 with numpy and torch, and nothing else of ours:
#   scripts/gpu-bundle.sh [build dir, default build/release] [out dir, default build/gpu-bundle]
# then copy the out dir (and the repo's tracked files) there and run scripts/gpu-check.sh on it.
#
# Layout: bin/ (polygrad, polygrad-conformance), lib/ (libpolygrad under its soname, the
# libraries it needs that such a machine lacks), lib/polygrad/plugins/ (found beside
# libpolygrad; with the cuda plugin's compiler library, libpolygrad_cuda_compiler.so),
# test-plugins/ (the Python suite's second device), python/polygrad (the package; POLYGRAD_LIB
# names lib/libpolygrad.so.*), env.sh (sourced by gpu-check.sh).
# Left out: the cpu_clang plugin, whose libLLVM-14 and libclang-cpp (~150 MB) do not fit; the
# wasm plugin's v8 engine (libpolygrad_wasm_v8.so and its 45 MB libnode: the wasm plugin there
# runs its interp engine);
# libc, libstdc++ and the loader (the machine's own); libcuda, libnvrtc and libnvJitLink
# (the machine's driver and toolkit). Every file is a plain file, no symlinks.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-build/release}"
out="${2:-build/gpu-bundle}"
case "$build" in /*) ;; *) build="$repo/$build" ;; esac
case "$out" in /*) ;; *) out="$repo/$out" ;; esac
[ -f "$build/CMakeCache.txt" ] || { echo "gpu-bundle: $build is not a CMake build dir" >&2; exit 1; }

rm -rf "$out"
stage="$out.install"
rm -rf "$stage"
cmake --install "$build" --prefix "$stage" >/dev/null
mkdir -p "$out/bin" "$out/lib/polygrad/plugins" "$out/test-plugins" "$out/python"
cp -L "$stage/bin/polygrad" "$out/bin/"
[ -f "$stage/bin/polygrad-conformance" ] && cp -L "$stage/bin/polygrad-conformance" "$out/bin/"
soname="$(objdump -p "$stage/lib/libpolygrad.so" | awk '/SONAME/ {print $2}')"
cp -L "$stage/lib/libpolygrad.so" "$out/lib/$soname"
for p in "$stage"/lib/polygrad/plugins/polygrad_*.so; do
  [ "$(basename "$p")" = polygrad_cpu_clang.so ] && continue
  cp -L "$p" "$out/lib/polygrad/plugins/"
done
# The cuda plugin's compiler library (NVRTC, nvJitLink), which it loads from its own folder.
c="$stage/lib/polygrad/plugins/libpolygrad_cuda_compiler.so"
[ -f "$c" ] && cp -L "$c" "$out/lib/polygrad/plugins/"
rm -rf "$stage"
test_plugin="$build/tests/core/plugins/polygrad_test_host.so"
[ -f "$test_plugin" ] && cp -L "$test_plugin" "$out/test-plugins/"
# The fault check (tests/cuda/fault_check.cpp), a test program, not installed.
[ -f "$build/bin/cuda_fault_check" ] && cp -L "$build/bin/cuda_fault_check" "$out/bin/"

# The shared libraries they need that a CUDA + torch machine does not have (resolved here).
skip='^(linux-vdso|ld-linux|libc\.|libm\.|libstdc\+\+|libgcc_s|libdl\.|libpthread|librt\.|libcuda\.|libcudart|libnvrtc|libnvJitLink|libnvidia)'
for f in "$out"/bin/* "$out"/lib/*.so* "$out"/lib/polygrad/plugins/*.so "$out"/test-plugins/*.so; do
  [ -f "$f" ] || continue
  LD_LIBRARY_PATH="$out/lib" ldd "$f" | awk '$2 == "=>" {print $1, $3}'
done | sort -u | while read -r name path; do
  [[ "$name" =~ $skip ]] && continue
  [ -f "$out/lib/$name" ] && continue
  [ "$path" = "not" ] && { echo "gpu-bundle: $name not found here" >&2; exit 1; }
  cp -L "$path" "$out/lib/$name"
done

cp -r "$repo/frontends/python/polygrad" "$out/python/"
find "$out/python" -name __pycache__ -prune -exec rm -rf {} +
cat >"$out/env.sh" <<EOF
# Sourced by scripts/gpu-check.sh: the bundle's programs, library, plugins and Python package.
bundle="\$(cd "\$(dirname "\${BASH_SOURCE[0]}")" && pwd)"
export PATH="\$bundle/bin:\$PATH"
export LD_LIBRARY_PATH="\$bundle/lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
export POLYGRAD_LIB="\$bundle/lib/$soname"
export PYTHONPATH="\$bundle/python\${PYTHONPATH:+:\$PYTHONPATH}"
export POLYGRAD_TEST_PLUGIN="\$bundle/test-plugins/polygrad_test_host.so"
EOF
# What the machine's C and C++ runtimes must provide (the newest symbol versions used).
needs="$(for f in "$out"/bin/* "$out"/lib/*.so* "$out"/lib/polygrad/plugins/*.so; do
  objdump -T "$f"; done | grep -o 'GLIBC_2\.[0-9.]*\|GLIBCXX_3\.[0-9.]*' | sort -uV |
  awk -F_ '{v[$1] = $0} END {print v["GLIBC"], v["GLIBCXX"]}')"
echo "$needs" >"$out/NEEDS"

echo "gpu-bundle: $out"
(cd "$out" && find . -type f | sort | sed 's/^/  /')
echo "needs: $needs (the machine's libc and libstdc++)"
kib="$(du -sk "$out" | cut -f1)"
echo "size: $((kib / 1024)) MiB ($kib KiB)"
if [ "$kib" -gt $((60 * 1024)) ]; then
  echo "gpu-bundle: $out is over 60 MiB, too big to carry" >&2
  exit 1
fi
