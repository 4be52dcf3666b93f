#!/usr/bin/env bash
# The GPU check of issue 33, for a machine with an NVIDIA GPU, its driver, the CUDA toolkit
# (NVRTC, nvJitLink), python3 with numpy, torch and pytest, and nothing else of ours. It runs
# from this repo's tracked files and a bundle made by scripts/gpu-bundle.sh on a build machine:
#   scripts/gpu-check.sh [bundle dir, default build/gpu-bundle]
# Steps, each under a timeout, each run even when an earlier one failed:
#   devices      nvidia-smi -L, polygrad devices --verbose; passes when cuda:0 is listed
#   conformance  polygrad conformance cuda --reference emu (the kit, then the host corpus
#                compared with the emulator: the bundle has no cpu_clang)
#   faults       bin/cuda_fault_check: a kernel fault is reported with the kernel's name, at
#                synchronize and with debug_sync
#   pytest       the Python suite with POLYGRAD_DEVICE=cuda (-n 8 with pytest-xdist, a per-test
#                timeout with pytest-timeout; tests that need the cpu device skip)
#   bench        bench/gpu.py: polygrad on cuda beside torch on cuda
#   repro        the two failures an H200 showed at 0615657, alone, with debug_sync (below)
#   shapes       (only when named in GPU_CHECK_STEPS) bench/gpu_shapes.sh: the GEMM cases under
#                each candidate tile and tensor-core shape of the group codegen
#   profile      (only when named) ncu's speed-of-light, occupancy and warp-state sections for
#                the first product kernel of bench/gpu.py's fp32 and bf16 4096 GEMM cases
# GPU_CHECK_STEPS picks steps ("devices faults pytest"); GPU_CHECK_LIMIT_<STEP> sets a step's
# limit in seconds, GPU_CHECK_WORKERS pytest's workers, GPU_CHECK_PYTEST_ARGS more arguments
# (shell words: GPU_CHECK_PYTEST_ARGS="-k 'not nccl'" passes one -k expression).
# Logs go to $OUT (else ./gpu-check-logs): one per step and summary.txt. Whole run < 10 min.
# A dry run of the script itself off a GPU, on the emulator:
#   GPU_CHECK_PLUGIN=gpu_emu GPU_CHECK_DEVICE=emu \
#   GPU_CHECK_BENCH_ARGS="--torch-device cpu --small" scripts/gpu-check.sh
# shellcheck disable=SC2317  # (the step functions run through `timeout bash -c`)
set -uo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
bundle="${1:-$repo/build/gpu-bundle}"
logs="${OUT:-$PWD/gpu-check-logs}"
mkdir -p "$logs"
summary="$logs/summary.txt"
plugin="${GPU_CHECK_PLUGIN:-cuda}"
dev="${GPU_CHECK_DEVICE:-cuda}"
bench_args="${GPU_CHECK_BENCH_ARGS:-}"
: >"$summary"
if [ ! -f "$bundle/env.sh" ]; then
  echo "gpu-check: $bundle is not a bundle (no env.sh): run scripts/gpu-bundle.sh" | tee "$summary"
  exit 2
fi
# shellcheck source=/dev/null
source "$bundle/env.sh"
cd "$repo" || exit 2

# NVRTC and nvJitLink: the toolkit's, else those of pip's nvidia packages (torch's).
cuda_dirs=""
for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib $(python3 -c '
import glob, os, site
roots = site.getsitepackages() + [site.getusersitepackages()]
for r in roots:
    for d in sorted(glob.glob(os.path.join(r, "nvidia", "**", "lib"), recursive=True)):
        print(d)' 2>/dev/null); do
  if compgen -G "$d/libnvrtc.so*" >/dev/null || compgen -G "$d/libnvJitLink.so*" >/dev/null; then
    cuda_dirs="$cuda_dirs:$d"
  fi
done
export LD_LIBRARY_PATH="$LD_LIBRARY_PATH$cuda_dirs"

# step NAME SECONDS COMMAND...: runs COMMAND with its output in $logs/NAME.log; records the
# outcome (the log's last line that `outcome` picks) and the time in the summary.
results=()
step() {
  local name="$1" limit="$2"
  shift 2
  local log="$logs/$name.log" start end rc
  echo "== $name (limit ${limit}s): $*"
  start=$(date +%s%N)
  timeout -k 10 "$limit" bash -c '"$@"' step "$@" >"$log" 2>&1
  rc=$?
  end=$(date +%s%N)
  local what
  what="$(grep -m1 "^no $dev device" "$log")"
  [ -n "$what" ] || what="$(outcome "$name" "$log")"
  [ -n "$what" ] || what="$(grep -v '^ *$' "$log" | tail -n 1 | cut -c1-200)"
  local status=PASS
  [ "$rc" -ne 0 ] && status=FAIL
  [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ] && status="TIMEOUT" && what="killed after ${limit}s; $what"
  results+=("$(printf '%-12s %-8s %4d.%ds  rc %-3s %s' "$name" "$status" \
    $(((end - start) / 1000000000)) $(((end - start) / 100000000 % 10)) "$rc" "$what")")
  tail -n 25 "$log"
  echo
}

# The line that says how a step went.
outcome() {
  case "$1" in
    devices) grep -m1 -E "^  $dev:0 " "$2" | sed 's/^ *//' ;;
    conformance) { grep -E '^\[corpus\]' "$2"; grep -E '^  skip  corpus|^result:' "$2"; } |
      tr '\n' ' ' ;;
    pytest) grep -E '(passed|failed|error|skipped|no tests ran).* in [0-9.]+s' "$2" | tail -n 1 ;;
    shapes) echo "$(grep -cE ' ok \(' "$2") rows checked ok, $(grep -cE 'MISMATCH|ERROR|nan' "$2") failed" ;;
    bench) echo "rows: $(grep -cE ' (yes|NO|-) +ok' "$2") checked ok, $(grep -cE 'MISMATCH|ERROR' "$2") \
mismatched or failed; targets: $(grep -cE ' yes +' "$2") met, $(grep -cE ' NO +' "$2") not met;" \
        "$(grep -m1 -E '^bench/gpu.py: ' "$2")" ;;
  esac
}

# Why there is no $dev device: the load report's line for the plugin.
no_cuda() {
  local line
  line="$(polygrad devices --verbose 2>&1 | grep -m1 "polygrad_$plugin.so" | sed 's/^ *//')"
  echo "no $dev device: ${line:-the $plugin plugin is not in the bundle (lib/polygrad/plugins)}"
  return 1
}
has_cuda() { polygrad devices 2>/dev/null | grep -q "^  $dev:0 "; }

devices() {
  echo "host: $(uname -srm); $(ldd --version 2>&1 | head -n1); bundle needs $(cat "$bundle/NEEDS")"
  python3 -c 'import sys, numpy, torch
print("python", sys.version.split()[0], "numpy", numpy.__version__, "torch", torch.__version__,
      "cuda", torch.version.cuda, "available", torch.cuda.is_available())'
  echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
  nvidia-smi -L || echo "nvidia-smi failed"
  polygrad devices --verbose
  has_cuda || no_cuda
}

pytest_cuda() {
  has_cuda || no_cuda || return 1
  local extra=()
  python3 -c 'import xdist' 2>/dev/null && extra+=(-n "${GPU_CHECK_WORKERS:-8}")
  python3 -c 'import pytest_timeout' 2>/dev/null && extra+=(--timeout 60)
  local more=()
  eval "more=(${GPU_CHECK_PYTEST_ARGS:-})"  # (the caller's words, quotes kept)
  POLYGRAD_DEVICE="$dev" python3 -m pytest -q -p no:cacheprovider "${extra[@]}" --maxfail 100 \
    -rfs "${more[@]}" frontends/python/tests
}

bench() {
  has_cuda || no_cuda || return 1
  # shellcheck disable=SC2086  # (the extra arguments are words)
  python3 bench/gpu.py --device "$dev" $bench_args
}

profile() {
  has_cuda || no_cuda || return 1
  local rc=0 ncu
  # (on PATH, else the toolkit's or a standalone Nsight Compute's)
  ncu="$(command -v ncu)"
  for f in /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu; do
    [ -z "$ncu" ] && [ -x "$f" ] && ncu="$f"
  done
  [ -n "$ncu" ] || { echo "no ncu on PATH, in /usr/local/cuda/bin or /opt/nvidia/nsight-compute"; return 1; }
  for c in gemm_fp32_4096 gemm_bf16_4096; do
    "$ncu" --clock-control none --section SpeedOfLight --section Occupancy --section LaunchStats \
      --section WarpStateStats --section MemoryWorkloadAnalysis -k 'regex:^r_' --launch-count 1 \
      python3 bench/gpu.py --device "$dev" --cases "$c" || rc=1
  done
  return "$rc"
}

shapes() {
  has_cuda || no_cuda || return 1
  # shellcheck disable=SC2086  # (the extra arguments are words)
  bench/gpu_shapes.sh --device "$dev" $bench_args_shapes
}

# (the steps run under timeout in a child bash: it needs the functions and the bundle's path)
# A kernel fault is reported with the kernel's name, at synchronize and with debug_sync (one
# process each: a fault leaves the CUDA context unusable).
faults() {
  has_cuda || no_cuda || return 1
  [ -x "$bundle/bin/cuda_fault_check" ] || { echo "no bin/cuda_fault_check in the bundle"; return 1; }
  local rc=0
  for mode in async debug_sync; do
    POLYGRAD_CUDA_PLUGIN="$bundle/lib/polygrad/plugins/polygrad_$plugin.so" \
      "$bundle/bin/cuda_fault_check" "$mode" || rc=1
  done
  return "$rc"
}

# The two failures an H200 showed at 0615657 (bench/README.md, Host G), each sequence in
# processes of its own, with debug_sync on the cuda device so that a fault names its kernel:
# test_random_graph[5398] and the two after it five times over, and the NCCL world-of-one test
# followed by the empty-inner matmuls (which read back stale memory after it), with
# POLYGRAD_DEBUG=1 listing every kernel run.
repro() {
  has_cuda || no_cuda || return 1
  local cfg="" rc=0
  if [ "$plugin" = cuda ]; then
    cfg="$(mktemp)"
    printf 'devices:\n  cuda:\n    debug_sync: true\n' >"$cfg"
  fi
  local run=(python3 -m pytest -q -p no:cacheprovider -rfs)
  for _ in 1 2 3 4 5; do
    POLYGRAD_CONFIG="$cfg" POLYGRAD_DEVICE="$dev" "${run[@]}" \
      frontends/python/tests/test_random_graphs.py -k "5398 or 5455 or 5477" || rc=1
  done
  POLYGRAD_CONFIG="$cfg" POLYGRAD_DEVICE="$dev" POLYGRAD_DEBUG=1 "${run[@]}" \
    frontends/python/tests/test_distributed_nccl.py frontends/python/tests/test_empty_tensors.py \
    -k "world_of_one or empty_inner" || rc=1
  return "$rc"
}

export -f devices no_cuda has_cuda pytest_cuda bench faults repro shapes profile
bench_args_shapes="${GPU_CHECK_SHAPES_ARGS:-}"
export bundle plugin dev bench_args bench_args_shapes
# GPU_CHECK_STEPS: the steps to run (default all), e.g. "devices faults pytest".
steps="${GPU_CHECK_STEPS:-devices conformance faults pytest bench repro}"
want() { [[ " $steps " == *" $1 "* ]]; }
want devices && step devices "${GPU_CHECK_LIMIT_DEVICES:-60}" devices
want shapes && step shapes "${GPU_CHECK_LIMIT_SHAPES:-200}" shapes
want profile && step profile "${GPU_CHECK_LIMIT_PROFILE:-90}" profile
want conformance && step conformance "${GPU_CHECK_LIMIT_CONFORMANCE:-90}" polygrad conformance "$plugin" --reference emu
want faults && step faults "${GPU_CHECK_LIMIT_FAULTS:-30}" faults
want pytest && step pytest "${GPU_CHECK_LIMIT_PYTEST:-240}" pytest_cuda
want bench && step bench "${GPU_CHECK_LIMIT_BENCH:-150}" bench
want repro && step repro "${GPU_CHECK_LIMIT_REPRO:-90}" repro

{
  echo "gpu-check summary ($(date -u +%FT%TZ), bundle $bundle)"
  printf '%s\n' "${results[@]}"
} | tee "$summary"
grep -q ' FAIL \| TIMEOUT ' "$summary" && exit 1
exit 0
