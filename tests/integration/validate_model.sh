#!/usr/bin/env bash
# `validate -m MODEL` and `run` make the same checks against the model's header before
# loading anything, and report them with the same file:line:column (issue 15).
set -uo pipefail
exe="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "${BASH_SOURCE[0]}")/check.sh"

# The demo topology: 512 tokens, trained for 4096 positions.
"$exe" synth -o "$tmp/tiny.gguf" > /dev/null 2>&1 || { echo "FAIL: synth"; exit 1; }

cat > "$tmp/huge.yaml" <<'YAML'
model: tiny.gguf
backends: [ { plugin: cpu } ]
context:
  length: 1000000000
sampling: [ greedy ]
YAML
cat > "$tmp/bias.yaml" <<'YAML'
model: tiny.gguf
backends: [ { plugin: cpu } ]
sampling:
  - { logit_bias: { bias: ["5:+1", "600:-inf"] } }
  - greedy
YAML
cat > "$tmp/long.yaml" <<'YAML'
model: tiny.gguf
backends: [ { plugin: cpu } ]
context: { length: 8192 }
sampling: [ greedy ]
YAML

check "validate --help says what -m adds" 0 "-m,--model.*header" -- "$exe" validate --help
check "validate without -m reads no model" 0 "bias.yaml: ok$" -- "$exe" validate "$tmp/bias.yaml"
check "validate -m: a missing model" 1 "-m $tmp/nope.gguf: model file $tmp/nope.gguf does not exist" \
  -- "$exe" validate "$tmp/bias.yaml" -m "$tmp/nope.gguf"

# A context of 10^9 positions on a 1 MiB model: refused from the plan, before any
# allocation. The address-space limit makes an attempt to allocate the cache fail fast
# instead of exhausting the machine.
# The address-space cap keeps a failed check from exhausting the machine; AddressSanitizer
# reserves terabytes of shadow address space at start, so its runs (ASAN_OPTIONS set by
# scripts/test --sanitize) go without the cap.
cap="ulimit -v 8388608;"
[ -n "${ASAN_OPTIONS:-}" ] && cap=""
figures="context.length 1000000000 needs [0-9.]+ [KMGT]iB of memory but [0-9.]+ [KMGT]iB is available: KV cache [0-9.]+ [KMGT]iB \(f16, 512 bytes per position x 1000000000 positions x 1 sequence\), recurrent state .*, compute arena .*; the longest context that fits is [0-9]+"
check "run -m --set context.length=1e9 is refused with the plan's figures" 1 "^switchyard run: --set context.length=1000000000: $figures" \
  -- bash -c "$cap \"$exe\" run -m \"$tmp/tiny.gguf\" --set context.length=1000000000 --prompt-ids 1 -n 1"
check "validate -m refuses it at context.length" 1 "^$tmp/huge.yaml:4:11: $figures" \
  -- "$exe" validate "$tmp/huge.yaml" -m "$tmp/tiny.gguf"
check "run refuses it at the same position" 1 "^switchyard run: $tmp/huge.yaml:4:11: $figures" \
  -- bash -c "$cap \"$exe\" run --pipeline \"$tmp/huge.yaml\" --prompt-ids 1 -n 1"

# A token id past the vocabulary: validate -m and run, both at the list item.
bias="$tmp/bias.yaml:4:36: token 600 is outside the model's vocabulary \(0\.\.511\)"
check "validate -m: logit_bias token outside the vocabulary" 1 "^$bias" -- "$exe" validate "$tmp/bias.yaml" -m "$tmp/tiny.gguf"
check "run: the same error at the same position" 1 "^switchyard run: $bias" \
  -- "$exe" run --pipeline "$tmp/bias.yaml" --prompt-ids 1 -n 1

# Longer than the trained context: a warning with both numbers, and still valid.
check "validate -m warns past the trained length" 0 \
  "long.yaml:3:20: warning: context.length 8192 is longer than the 4096 positions the model was trained on .*long.yaml: ok with" \
  -- bash -c "\"$exe\" validate \"$tmp/long.yaml\" -m \"$tmp/tiny.gguf\" 2>&1 | tr '\n' ' '"
check "run warns once" 0 "^1$" -- bash -c "\"$exe\" run --pipeline \"$tmp/long.yaml\" --prompt-ids 1 -n 1 2>&1 | grep -c 'is longer than the 4096 positions'"

echo "$failures failure(s)"
[ "$failures" = 0 ]
