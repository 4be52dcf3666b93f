#!/bin/sh
# engine_library_test.sh POLYGRAD EXPECT PLUGIN
# The v8 engine's library (libpolygrad_wasm_v8.so, beside PLUGIN) is loaded only when a device
# is opened on it, and the plugin copes without it:
#  1. discovering the plugins (`polygrad config check`) does not load libnode; opening wasm:0
#     (`polygrad devices`) does;
#  2. a copy of the plugin with no engine library beside it: the default engine falls back to
#     interp with a warning naming the file; engine=v8 fails init with the same reason;
#  3. a copy beside a file that is not a library: the default engine falls back to interp when
#     the device opens, with a warning naming the loader's reason; engine=v8 fails the device's
#     open with it.
set -u
cli=$1 expect=$2 plugin=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
fail() { echo "FAIL: $*" >&2; status=1; }

echo "devices: {}" >"$work/empty.yaml"
LD_DEBUG=files "$cli" config check "$work/empty.yaml" >"$work/discover.log" 2>&1 ||
  fail "polygrad config check: $(cat "$work/discover.log")"
grep -q "wasm" "$work/discover.log" || fail "config check did not open the wasm plugin"
grep -q "libnode.so" "$work/discover.log" && fail "discovering the plugins loaded libnode"
LD_DEBUG=files "$cli" devices >"$work/open.log" 2>&1 || fail "polygrad devices failed"
grep -q "libnode.so" "$work/open.log" || fail "opening wasm:0 did not load libnode"

mkdir "$work/alone" "$work/bogus"
cp "$plugin" "$work/alone/"
"$expect" 0 "wasm: engine v8 cannot be used (no $work/alone/libpolygrad_wasm_v8.so); using engine interp" \
  "WebAssembly (interp engine)" "result: PASS" \
  -- "$cli" conformance "$work/alone/polygrad_wasm.so" --no-corpus || fail "no library, default engine"
"$expect" 2 "option engine: 'v8' cannot be used (no $work/alone/libpolygrad_wasm_v8.so); interp can" \
  -- "$cli" conformance "$work/alone/polygrad_wasm.so" --option engine=v8 ||
  fail "no library, engine=v8"

cp "$plugin" "$work/bogus/"
echo "not a library" >"$work/bogus/libpolygrad_wasm_v8.so"
printf 'devices:\n  wasm:\n    engine: v8\n' >"$work/v8.yaml"
# (POLYGRAD_PLUGIN_PATH comes before the build's plugin folder: this copy is the wasm plugin)
POLYGRAD_PLUGIN_PATH="$work/bogus" "$expect" 0 \
  "warning: wasm: engine v8: cannot load $work/bogus/libpolygrad_wasm_v8.so: file too short; using engine interp" \
  "wasm:0  WebAssembly (interp engine)" -- "$cli" devices || fail "bad library, default engine"
POLYGRAD_PLUGIN_PATH="$work/bogus" POLYGRAD_CONFIG="$work/v8.yaml" "$expect" 0 \
  "wasm:0  error: [device_open] wasm:0 (plugin wasm): PG_ERR_UNSUPPORTED: wasm: engine v8: cannot load $work/bogus/libpolygrad_wasm_v8.so: file too short" \
  -- "$cli" devices || fail "bad library, engine=v8"
exit $status
