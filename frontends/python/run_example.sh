#!/usr/bin/env bash
# Runs examples/digits_mlp.py with the polygrad package installed in build/<dir>/venv.
#   frontends/python/run_example.sh [build dir, default build/release]
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
build="${1:-build/release}"
case "$build" in /*) ;; *) build="$repo/$build" ;; esac
source "$repo/frontends/python/install_venv.sh"
cd "$repo"
exec "$venv/bin/python" examples/digits_mlp.py
