#!/usr/bin/env bash
# Sourced by run_tests.sh and run_example.sh: makes build/<dir>/venv from Debian's python (with
# its site packages: numpy, torch, pytest) if missing and pip installs the package into it
# offline, copying the built libpolygrad and plugins. Expects $repo and $build; sets $venv.
venv="$build/venv"
if [ ! -x "$venv/bin/python" ]; then
  /usr/bin/python3 -m venv --system-site-packages "$venv"
fi
POLYGRAD_BUILD_DIR="$build" "$venv/bin/python" -m pip install --quiet --no-build-isolation \
  --no-index --no-deps --disable-pip-version-check --root-user-action=ignore "$repo/frontends/python"
rm -rf "$repo/frontends/python/build" "$repo/frontends/python/polygrad.egg-info"
