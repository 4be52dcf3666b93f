#!/usr/bin/env bash
# The per-op cost of the R frontend against the Python one, in one run: a small elementwise
# op (a + b on 16x16 float32 tensors, realised inputs) built lazily, and built and realised
# (its kernel cached), each the best of 5 rounds of process CPU time (user + system: on a
# shared machine, less noisy than wall time). Each case runs in a fresh process, in both
# languages: in R, a case run after another pays for the tensors the earlier one left to the
# collector (their finalizers, a grown heap). Then R's parts: the .Calls alone, the $ dispatch,
# and R's own floor: a bare S3 dispatch of `+` and of `$` on two classed external pointers whose
# methods return their argument (no polygrad call, nothing allocated in the method).
# Installs both packages from <build> first.
#   bench/frontends_per_op.sh [build dir, default build/release]
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-build/release}"
case "$build" in /*) ;; *) build="$repo/$build" ;; esac
source "$repo/frontends/python/install_venv.sh"
source "$repo/frontends/r/install.sh"

# py_case <expression of a and b> <calls per round>: us per call
py_case() {
  "$venv/bin/python" - "$1" "$2" <<'PY'
import sys, time
from polygrad import Tensor

a, b = Tensor.rand(16, 16).realize(), Tensor.rand(16, 16).realize()
f = eval("lambda: " + sys.argv[1])
n = int(sys.argv[2])
f()
best = float("inf")
for _ in range(5):
    t0 = time.process_time()
    for _ in range(n):
        f()
    best = min(best, (time.process_time() - t0) / n)
print(f"{best * 1e6:.3f}")
PY
}

# r_case <expression> <calls per round>: us per call
r_case() {
  Rscript - "$1" "$2" <<'R'
suppressPackageStartupMessages(library(polygrad))
args <- commandArgs(trailingOnly = TRUE)
cpu <- function() sum(proc.time()[c("user.self", "sys.self")])
a <- pg_rand(16, 16)$realize()
b <- pg_rand(16, 16)$realize()
add <- asNamespace("polygrad")$C_pgr_binop
realize <- asNamespace("polygrad")$C_pgr_realize
p <- structure(new("externalptr"), class = "bench_bare")
q <- structure(new("externalptr"), class = "bench_bare")
`+.bench_bare` <- compiler::cmpfun(function(e1, e2) e1)
`$.bench_bare` <- compiler::cmpfun(function(x, name) x)
f <- eval(parse(text = paste("function()", args[[1]])))
n <- as.integer(args[[2]])
invisible(f())
best <- Inf
for (r in 1:5) {
  t0 <- cpu()
  for (i in seq_len(n)) f()
  best <- min(best, (cpu() - t0) / n)
}
cat(sprintf("%.3f\n", best * 1e6))
R
}

py_lazy=$(py_case "a + b" 20000)
py_real=$(py_case "(a + b).realize()" 5000)
r_lazy=$(r_case "a + b" 20000)
r_real=$(r_case "(a + b)\$realize()" 10000)
r_call=$(r_case '.Call(add, "add", a, b)' 20000)
r_dollar=$(r_case "a\$realize" 20000)
r_call_real=$(r_case '.Call(realize, .Call(add, "add", a, b))' 10000)
r_bare_plus=$(r_case "p + q" 20000)
r_bare_dollar=$(r_case "p\$realize" 20000)

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
printf '%-34s %10s %10s %8s\n' "per op (us, best of 5)" "Python" "R" "R / Py"
printf '%-34s %10s %10s %8s\n' "a + b, lazy" "$py_lazy" "$r_lazy" "$(ratio "$r_lazy" "$py_lazy")"
printf '%-34s %10s %10s %8s\n' "(a + b)\$realize(), kernel cached" "$py_real" "$r_real" \
  "$(ratio "$r_real" "$py_real")"
echo "R's parts: .Call of the add alone $r_call us, the \$ dispatch of a\$realize $r_dollar us,"
echo "  .Call of the add and of realize (no S3 dispatch) $r_call_real us"
echo "R's floor, a bare S3 dispatch on classed external pointers: \`+\` $r_bare_plus us," \
  "\`\$\` $r_bare_dollar us"
