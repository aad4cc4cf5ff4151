#!/usr/bin/env bash
# The conversion plan as `plan`, `validate` and `run` show it, for a model whose weights are
# in a type only a test plugin knows (tests/plugins/toy_type.cpp: TOY8 repacks into Q8_0,
# TOY8P has no repack), and format.convert_to's schema.
set -uo pipefail
exe="$1"
testplugins="$2"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "${BASH_SOURCE[0]}")/check.sh"

"$exe" synth -o "$tmp/demo.gguf" > /dev/null 2>&1 || { echo "FAIL: synth"; exit 1; }
mkdir "$tmp/plugins"
cp "$testplugins/libsytest-toy_type.so" "$testplugins/libsytest-toy_type.so.json" "$tmp/plugins/"
pipeline() {  # FORMAT [EXTRA LINE]
  printf 'model: { path: demo.gguf, format: %s }\nplugin_path: [plugins]\nbackends: [ { plugin: cpu, threads: 2 } ]\ncontext: { length: 256 }\nsampling: [ greedy ]\n%s\n' \
    "$1" "${2:-}"
}
pipeline test_toy_gguf > "$tmp/toy.yaml"
pipeline test_toy_gguf_plain > "$tmp/plain.yaml"
pipeline test_toy_gguf_plain "format: { convert_to: q8_0 }" > "$tmp/rq.yaml"
pipeline gguf "format: { convert_to: q8 }" > "$tmp/bad.yaml"

check "plan: TOY8 is repacked into Q8_0 on the CPU, with its bytes" 0 \
  "conversions +test-toy\.TOY8 on cpu: repacked into Q8_0 at load \(the type's own repack, from test-toy\), [0-9]+ tensors, [0-9.]+ [KM]iB -> [0-9.]+ [KM]iB" -- \
  "$exe" plan -P "$tmp/toy.yaml" --cpu-bandwidth 50GB/s
check "plan --json: the same step" 0 '"action": "repack",' -- \
  "$exe" plan -P "$tmp/toy.yaml" --cpu-bandwidth 50GB/s --json
check "plan: TOY8P runs on the CPU's generic kernel" 0 "test-toy\.TOY8P on cpu: generic kernel" -- \
  "$exe" plan -P "$tmp/plain.yaml" --cpu-bandwidth 50GB/s
check "plan: with format.convert_to it is requantized" 0 "test-toy\.TOY8P on cpu: requantized to Q8_0 at load \(format\.convert_to\)" -- \
  "$exe" plan -P "$tmp/rq.yaml" --cpu-bandwidth 50GB/s
check "validate -m: the plan per backend" 0 "test-toy\.TOY8 on cpu: repacked into Q8_0" -- \
  "$exe" validate "$tmp/toy.yaml" -m "$tmp/demo.gguf"
check "validate: an unknown convert_to names the key and the choices" 1 \
  "'format\.convert_to' must be one of q8_0, q4_k,? (or )?f16; got 'q8'" -- \
  "$exe" validate "$tmp/bad.yaml"
check "validate: an unknown key under format" 1 "convert" -- \
  bash -c "printf 'model: %s\nformat: { convert: q8_0 }\n' '$tmp/demo.gguf' > '$tmp/key.yaml'; '$exe' validate '$tmp/key.yaml'"
check "run: the conversion is logged once, with its bytes" 0 \
  "test-toy\.TOY8 on cpu: repacked into Q8_0 at load .* [0-9.]+ [KM]iB -> [0-9.]+ [KM]iB" -- \
  "$exe" --log-level info run -P "$tmp/toy.yaml" --prompt-ids 1,2,3 -n 2
check "run --json: converted weights counted" 0 '"converted_weights":[1-9]' -- \
  "$exe" --log-level error run -P "$tmp/toy.yaml" --prompt-ids 1,2,3 -n 2 --json

[ "$failures" -eq 0 ] || { echo "$failures failed"; exit 1; }
echo "all passed"
