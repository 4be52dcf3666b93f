#!/usr/bin/env bash
# Installs the Debian packages polygrad builds against, only those that are missing.
# Idempotent; needs root (or sudo) only when something is missing.
set -euo pipefail

packages=(
  cmake ninja-build ccache g++ make pkgconf
  llvm-14-dev libclang-cpp14-dev libclang-14-dev clang-14
  libboost-dev libboost-filesystem-dev libboost-program-options-dev
  libtbb-dev libyaml-cpp-dev nlohmann-json3-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  python3-venv python3-pip python3-setuptools python3-wheel python3-numpy python3-pytest python3-torch python3-sklearn python3-tqdm
  libopenblas0-pthread
  wabt
  r-base-dev r-cran-testthat r-cran-progress r-cran-roxygen2
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
