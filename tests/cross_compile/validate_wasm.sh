#!/usr/bin/env bash
# Validates every WebAssembly module in DIR with wabt's wasm-validate (Debian package wabt): the
# modules the wasm plugin rendered for the kernels of a run with POLYGRAD_CROSS_COMPILE=wasm
# (docs/compiler.md). Fails when a module is invalid or when there is none.
set -euo pipefail
dir=${1:?usage: validate_wasm.sh DIR}
shopt -s nullglob
files=("$dir"/*.wasm)
if [ ${#files[@]} -eq 0 ]; then
  echo "validate_wasm: no .wasm files in $dir" >&2
  exit 1
fi
bad=0
for f in "${files[@]}"; do
  if ! out=$(wasm-validate "$f" 2>&1); then
    echo "validate_wasm: $f: $out" >&2
    bad=$((bad + 1))
  fi
done
echo "validate_wasm: ${#files[@]} modules, $bad invalid"
[ "$bad" -eq 0 ]
