#!/usr/bin/env bash
# R CMD check --no-manual of the polygrad R package against the core in <build>, in a scratch
# folder under <build>; exits non-zero on an ERROR or a WARNING (NOTEs are printed).
#   frontends/r/check.sh [build dir, default build/release]
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
build="${1:-build/release}"
case "$build" in /*) ;; *) build="$repo/$build" ;; esac
work="$build/Rcheck"
rm -rf "$work"
mkdir -p "$work"
cd "$work"
export POLYGRAD_BUILD_DIR="$build"
R CMD build --no-build-vignettes "$repo/frontends/r" >build.log 2>&1 || { cat build.log; exit 1; }
(cd "$repo/frontends/r" && ./cleanup)
tarball=$(ls polygrad_*.tar.gz)
status=0
_R_CHECK_FORCE_SUGGESTS_=false R CMD check --no-manual "$tarball" || status=$?
grep -E "^\* checking .*(NOTE|WARNING|ERROR)$" -A12 polygrad.Rcheck/00check.log || true
grep -qE "^Status:.*(WARNING|ERROR)" polygrad.Rcheck/00check.log && exit 1
exit $status
