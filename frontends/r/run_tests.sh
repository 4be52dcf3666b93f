#!/usr/bin/env bash
# Installs the polygrad R package into <build>/Rlib and runs its testthat tests.
#   frontends/r/run_tests.sh [build dir, default build/release] [testthat filter regex]
# With the Python package installed in <build>/venv (frontends/python/run_tests.sh makes it),
# a test also checks that Python reads the safetensors files R writes; with GPT-2's tokenizer
# files in build/deps/gpt2-encoder and node, one holds the tokenizer against OpenAI's encoder.
set -euo pipefail
repo="$(cd "$(dirname "$0")/../.." && pwd)"
build="${1:-build/release}"
filter="${2:-}"
case "$build" in /*) ;; *) build="$repo/$build" ;; esac
source "$repo/frontends/r/install.sh"
if [ -x "$build/venv/bin/python" ] && "$build/venv/bin/python" -c "import polygrad" 2>/dev/null; then
  export POLYGRAD_PYTHON="$build/venv/bin/python"
fi
# GPT-2's vocabulary and OpenAI's encoder (scripts/install-deps.sh fetches them) for the
# tokenizer's test against it.
encoder="$repo/build/deps/gpt2-encoder"
if [ -z "${POLYGRAD_GPT2_ENCODER:-}" ] && [ -f "$encoder/encoder.json" ]; then
  export POLYGRAD_GPT2_ENCODER="$encoder"
fi
cd "$repo/frontends/r/tests"
exec Rscript -e "res <- as.data.frame(testthat::test_dir('testthat', package = 'polygrad',
  load_package = 'installed', filter = if (nzchar('$filter')) '$filter' else NULL,
  reporter = 'summary', stop_on_failure = TRUE))
cat(sprintf('R: %d tests, %d expectations, %d skipped, %.1f s\\n', nrow(res), sum(res\$nb),
            sum(res\$skipped), sum(res\$real)))"
