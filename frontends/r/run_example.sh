#!/usr/bin/env bash
# Runs examples/iris.R with the polygrad R package installed in <build>/Rlib.
#   frontends/r/run_example.sh [build dir, default build/release]
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
build="${1:-build/release}"
case "$build" in /*) ;; *) build="$repo/$build" ;; esac
source "$repo/frontends/r/install.sh"
cd "$repo"
exec Rscript examples/iris.R
