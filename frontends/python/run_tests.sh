#!/usr/bin/env bash
# Installs the polygrad Python package into a venv of the build dir and runs its tests.
#   frontends/python/run_tests.sh [build dir, default build/release] [pytest args...]
# The venv (build/<dir>/venv) comes from Debian's /usr/bin/python3 with --system-site-packages
# (numpy, torch, pytest are Debian packages); pip installs offline, copying the built
# libpolygrad and plugins into the package.
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
build="${1:-build/release}"
shift || true
case "$build" in /*) ;; *) build="$repo/$build" ;; esac
source "$repo/frontends/python/install_venv.sh"
cd "$repo"
# The core tests' plugin, a second device for test_placement.py (skipped when it is not built).
export POLYGRAD_TEST_PLUGIN="${POLYGRAD_TEST_PLUGIN:-$build/tests/core/plugins/polygrad_test_host.so}"
# A ccl plugin of one rank with no MPI (tests/ccl), for test_distributed.py's error paths.
export POLYGRAD_TEST_CCL_PLUGIN="${POLYGRAD_TEST_CCL_PLUGIN:-$build/tests/ccl/plugins/polygrad_ccl_loopback.so}"
# -p no:cacheprovider: no .pytest_cache in the source tree.
exec "$venv/bin/python" -m pytest -q -p no:cacheprovider "$repo/frontends/python/tests" "$@"
