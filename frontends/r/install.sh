#!/usr/bin/env bash
# Sourced by run_tests.sh, run_example.sh and check.sh: installs the polygrad R package into
# <build>/Rlib (R CMD INSTALL, compiler warnings as errors), copying in the libpolygrad and
# plugins of <build>. Expects $repo and $build; sets $rlib and exports R_LIBS.
rlib="$build/Rlib"
mkdir -p "$rlib"
log="$build/Rlib-install.log"
if ! POLYGRAD_BUILD_DIR="$build" R_MAKEVARS_USER="$repo/frontends/r/tools/Makevars.strict" \
    R CMD INSTALL --no-multiarch -l "$rlib" "$repo/frontends/r" >"$log" 2>&1; then
  cat "$log" >&2
  echo "frontends/r: R CMD INSTALL failed (log: $log)" >&2
  (cd "$repo/frontends/r" && ./cleanup)
  exit 1
fi
(cd "$repo/frontends/r" && ./cleanup)
export R_LIBS="$rlib${R_LIBS:+:$R_LIBS}"
