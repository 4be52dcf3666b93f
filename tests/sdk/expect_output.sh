#!/bin/sh
# expect_output.sh CODE PATTERN... -- COMMAND [ARG...]
# Runs COMMAND (stdout and stderr together) and fails unless it exits with CODE and its output
# holds every PATTERN (fixed strings). Prints the output when it fails.
code=$1
shift
patterns=""
while [ "$#" -gt 0 ] && [ "$1" != "--" ]; do
  patterns="$patterns
$1"
  shift
done
[ "$1" = "--" ] || { echo "expect_output.sh: no -- before the command" >&2; exit 2; }
shift
output=$("$@" 2>&1)
got=$?
status=0
if [ "$got" -ne "$code" ]; then
  echo "exit code $got, expected $code" >&2
  status=1
fi
printf '%s\n' "$patterns" | while IFS= read -r p; do
  [ -z "$p" ] && continue
  printf '%s\n' "$output" | grep -qF -- "$p" || { echo "missing from the output: $p" >&2; exit 1; }
done || status=1
[ "$status" -eq 0 ] || printf '%s\n' "$output" >&2
exit "$status"
