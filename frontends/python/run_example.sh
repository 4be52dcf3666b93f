#!/usr/bin/env bash
# Runs examples/digits_mlp.py with the polygrad package installed in build/<dir>/venv.
#   frontends/python/run_example.sh [build dir, default build/release]
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
build="${1:-build/release}"
case "$build" in /*) ;; *) build="$repo/$build" ;; esac
venv="$build/venv"
if [ ! -x "$venv/bin/python" ]; then
  /usr/bin/python3 -m venv --system-site-packages "$venv"
fi
POLYGRAD_BUILD_DIR="$build" "$venv/bin/python" -m pip install --quiet --no-build-isolation \
  --no-index --no-deps --disable-pip-version-check --root-user-action=ignore "$repo/frontends/python"
rm -rf "$repo/frontends/python/build" "$repo/frontends/python/polygrad.egg-info"
cd "$repo"
exec "$venv/bin/python" examples/digits_mlp.py
