#!/usr/bin/env bash
# The per-op cost of the R frontend against the Python one, in one run: a small elementwise
# op (a + b on 16x16 float32 tensors, realised inputs) built lazily, and built and realised
# (its kernel cached), each the best of 5 rounds of process CPU time (user + system: on a
# shared machine, less noisy than wall time); then R's parts: the .Call alone, the $ dispatch.
# Installs both packages from <build> first.
#   bench/frontends_per_op.sh [build dir, default build/release]
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-build/release}"
case "$build" in /*) ;; *) build="$repo/$build" ;; esac
source "$repo/frontends/python/install_venv.sh"
source "$repo/frontends/r/install.sh"

py=$("$venv/bin/python" - <<'PY'
import time
from polygrad import Tensor

def per_call(f, n, rounds=5):
    f()
    best = float("inf")
    for _ in range(rounds):
        t0 = time.process_time()
        for _ in range(n):
            f()
        best = min(best, (time.process_time() - t0) / n)
    return best * 1e6

a, b = Tensor.rand(16, 16).realize(), Tensor.rand(16, 16).realize()
print(f"{per_call(lambda: a + b, 20000):.3f} {per_call(lambda: (a + b).realize(), 2000):.3f}")
PY
)
r=$(Rscript -e '
suppressPackageStartupMessages(library(polygrad))
cpu <- function() sum(proc.time()[c("user.self", "sys.self")])
per_call <- function(f, n, rounds = 5) {
  f()
  best <- Inf
  for (r in seq_len(rounds)) {
    t0 <- cpu()
    for (i in seq_len(n)) f()
    best <- min(best, (cpu() - t0) / n)
  }
  best * 1e6
}
a <- pg_rand(16, 16)$realize()
b <- pg_rand(16, 16)$realize()
add <- asNamespace("polygrad")$C_pgr_binop
realize <- asNamespace("polygrad")$C_pgr_realize
cat(sprintf("%.3f %.3f %.3f %.3f %.3f\n", per_call(function() a + b, 20000),
            per_call(function() (a + b)$realize(), 2000),
            per_call(function() .Call(add, "add", a, b), 20000),
            per_call(function() a$realize, 20000),
            per_call(function() .Call(realize, .Call(add, "add", a, b)), 2000)))')
read -r py_lazy py_real <<<"$py"
read -r r_lazy r_real r_call r_dollar r_call_real <<<"$r"
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
printf '%-34s %10s %10s %8s\n' "per op (us, best of 5)" "Python" "R" "R / Py"
printf '%-34s %10s %10s %8s\n' "a + b, lazy" "$py_lazy" "$r_lazy" "$(ratio "$r_lazy" "$py_lazy")"
printf '%-34s %10s %10s %8s\n' "(a + b)\$realize(), kernel cached" "$py_real" "$r_real" "$(ratio "$r_real" "$py_real")"
echo "R's parts: .Call of the add alone $r_call us, the \$ dispatch of a\$realize $r_dollar us,"
echo "  .Call of the add and of realize (no S3 dispatch) $r_call_real us"
