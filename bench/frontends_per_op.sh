#!/usr/bin/env bash
# The per-op cost of the R frontend against the Python one, in one run: a small elementwise
# op (a + b on 16x16 float32 tensors, realised inputs) built lazily, and built and realised
# (its kernel cached), each the median of 9 rounds of process CPU time (user + system: on a
# shared machine, less noisy than wall time) after 3 rounds of warm-up: the steady state of a
# loop. (R's first rounds are faster than its later ones, before the tensors it finalised fill
# its old generation; the best round would show those.) Each case runs in a fresh process, in
# both languages: in R, a case run after another pays for the tensors the earlier one left to
# the collector. Then R's parts: the .Calls alone, the $ dispatch, and R's own floor: a bare S3
# dispatch of `+` and of `$` on two classed external pointers whose methods return their
# argument (no polygrad call, nothing allocated in the method). Last, the floor under both: the
# C API's add (and realize) from C (bench/frontends_per_op_floor.c), each result freed at once
# as Python frees it, and 3,500 at a time, about as many as R finalises per collection in the
# realised case.
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
rounds = []
for _ in range(12):
    t0 = time.process_time()
    for _ in range(n):
        f()
    rounds.append((time.process_time() - t0) / n)
print(f"{sorted(rounds[3:])[4] * 1e6:.3f}")
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
rounds <- numeric(12)
for (r in 1:12) {
  t0 <- cpu()
  for (i in seq_len(n)) f()
  rounds[r] <- (cpu() - t0) / n
}
cat(sprintf("%.3f\n", sort(rounds[4:12])[5] * 1e6))
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
floor_bin="$build/bench_frontends_per_op_floor"
cc -O2 -I"$repo/core/include" -I"$repo/sdk/include" "$repo/bench/frontends_per_op_floor.c" \
  -L"$build/lib" -lpolygrad -Wl,-rpath,"$build/lib" -o "$floor_bin"
c_lazy=$("$floor_bin" 0 20000 1)
c_real=$("$floor_bin" 1 10000 1)
c_real_batch=$("$floor_bin" 1 10000 3500)

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
printf '%-34s %10s %10s %8s\n' "per op (us, median)" "Python" "R" "R / Py"
printf '%-34s %10s %10s %8s\n' "a + b, lazy" "$py_lazy" "$r_lazy" "$(ratio "$r_lazy" "$py_lazy")"
printf '%-34s %10s %10s %8s\n' "(a + b)\$realize(), kernel cached" "$py_real" "$r_real" \
  "$(ratio "$r_real" "$py_real")"
echo "R's parts: .Call of the add alone $r_call us, the \$ dispatch of a\$realize $r_dollar us,"
echo "  .Call of the add and of realize (no S3 dispatch) $r_call_real us"
echo "R's floor, a bare S3 dispatch on classed external pointers: \`+\` $r_bare_plus us," \
  "\`\$\` $r_bare_dollar us"
echo "The C API from C: add + free $c_lazy us; add + realize + free $c_real us freed at once," \
  "$c_real_batch us freed 3,500 at a time"
