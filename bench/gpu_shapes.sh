#!/usr/bin/env bash
# The GEMM cases of bench/gpu.py under each candidate shape of the group codegen's tile and
# tensor-core forms (POLYGRAD_GPU_TILE, POLYGRAD_GPU_WMMA), and its softmax and layernorm cases
# under each candidate count of threads per row (POLYGRAD_GPU_ROW_THREADS; docs/config.md),
# one process per candidate, torch beside it in each; for choosing
# core/codegen/group/tuning.hpp's defaults on a GPU.
#   bench/gpu_shapes.sh [--device cuda] [--small]      (any bench/gpu.py arguments)
# Prints one line per shape and case: the shape, then bench/gpu.py's row ("default": the
# shapes of tuning.hpp, no variable set; the others are candidates beside them). With
# GPU_SHAPES_TILE / GPU_SHAPES_WMMA / GPU_SHAPES_ROW (space-separated) in place of the lists
# below.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
tile_shapes="${GPU_SHAPES_TILE:-default 128,128,8,8,8 128,128,16,8,8 128,64,8,8,4 64,128,8,4,8}"
wmma_shapes="${GPU_SHAPES_WMMA:-default 2,4,4,4,2 2,4,4,4,1 2,2,4,4,2 4,2,4,4,2 2,4,4,4,4}"
row_threads="${GPU_SHAPES_ROW:-default 32 64 128 512 1024}"
rc=0
run() {  # run VAR SHAPE CASES ARGS...
  local var="$1" shape="$2" cases="$3"
  shift 3
  local out
  if [ "$shape" = default ]; then
    out="$(env -u "$var" python3 bench/gpu.py --cases "$cases" "$@" 2>&1)" || rc=1
  else
    out="$(env "$var=$shape" python3 bench/gpu.py --cases "$cases" "$@" 2>&1)" || rc=1
  fi
  # The rows (after the header's rule), else the whole output: an error to see.
  grep -q '^----' <<<"$out" && out="$(sed '1,/^----/d' <<<"$out")"
  while IFS= read -r line; do echo "$var=$shape  $line"; done <<<"$out"
}
for s in $tile_shapes; do run POLYGRAD_GPU_TILE "$s" gemm_fp32 "$@"; done
for s in $wmma_shapes; do run POLYGRAD_GPU_WMMA "$s" gemm_f16_4096,gemm_bf16_4096 "$@"; done
for s in $row_threads; do run POLYGRAD_GPU_ROW_THREADS "$s" softmax,layernorm "$@"; done
exit "$rc"
