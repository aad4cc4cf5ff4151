#!/usr/bin/env bash
# The conformance suite must notice a broken device, not only pass a good one. The fake GPU
# breaks on request (SWITCHYARD_FAKE_FAULT, tests/plugins/fake_gpu.cpp): a scale kernel 0.1%
# off must fail exactly the scale cases, and a copy_to_host that reads before the queued
# work ran must fail every case the device takes. --require-all turns the cases it refuses
# into a failure too.
#   conformance_faults.sh SWITCHYARD FAKE_PLUGIN_DIR
set -uo pipefail
exe="$1"
dir="$2"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$exe" conformance fake --plugin-path "$dir" > "$tmp/good" || { cat "$tmp/good"; fail "the fake device does not pass as it is"; }
grep -q "0 failed, 0 errors" "$tmp/good" || fail "no passing summary for the fake device"

SWITCHYARD_FAKE_FAULT=scale "$exe" conformance fake --plugin-path "$dir" > "$tmp/scale"
rc=$?
cat "$tmp/scale"
[ "$rc" = 1 ] || fail "a wrong scale kernel exited $rc, not 1"
[ "$(grep -c '^FAIL ' "$tmp/scale")" = "$(grep -c '^FAIL scale ' "$tmp/scale")" ] || fail "cases other than scale failed"
grep -q "^FAIL scale F32 \[37x5\]: error 1.00e-03 > tolerance 1.00e-06" "$tmp/scale" || fail "the scale error is not reported as 1e-3"

SWITCHYARD_FAKE_FAULT=early-read "$exe" conformance fake --plugin-path "$dir" > "$tmp/early"
rc=$?
cat "$tmp/early"
[ "$rc" = 1 ] || fail "an early read exited $rc, not 1"
grep -q " 0 passed, [1-9][0-9]* failed" "$tmp/early" || fail "an early read left some case passing"
"$exe" conformance fake --plugin-path "$dir" --ops add,gelu --require-all > "$tmp/all"
rc=$?
cat "$tmp/all"
[ "$rc" = 1 ] || fail "--require-all with refused cases exited $rc, not 1"
grep -q "^  gelu: 5 of 5 cases (F32)" "$tmp/all" || fail "the refused gelu cases are not listed"
echo "PASS"
