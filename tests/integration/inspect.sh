#!/usr/bin/env bash
# switchyard inspect on real models from the shared data, including a split copy.
set -uo pipefail
exe="$1"
shared="$2"
if [ ! -d "$shared" ]; then
  if [ "${CI:-}" = "true" ]; then echo "FAILED: shared data $shared missing under CI=true"; exit 1; fi
  echo "SKIPPED: shared data $shared is missing"; exit 77
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
failures=0
# A here-string, not a pipe: grep -q exits at the first match, and under pipefail the
# writer's SIGPIPE would turn a match into a failure.
expect() {  # expect NAME REGEX TEXT
  if grep -Eq -- "$2" <<< "$3"; then echo "ok   [$1]"; else echo "FAIL [$1]: no /$2/"; printf '%s\n' "$3" | head -30; failures=$((failures + 1)); fi
}

out="$("$exe" inspect "$shared/models/stories260K.gguf")"
expect "text: architecture" "architecture: +llama" "$out"
expect "text: layers" "llama.block_count = 5" "$out"
expect "text: embedding" "llama.embedding_length = 64" "$out"
expect "text: tokenizer" "tokenizer: +llama, 512 tokens" "$out"
expect "text: no template" "chat template: +absent" "$out"

json="$("$exe" inspect --json --tensors "$shared/models/stories260K.gguf")"
expect "json: architecture" '"architecture": "llama"' "$json"
expect "json: tokens" '"tokens": 512' "$json"
expect "json: tensor table" '"name": "token_embd.weight"' "$json"
expect "json: bytes by type" '"F32": \{' "$json"

out="$("$exe" inspect "$shared/fixtures/llama-e256-q4_k_m.gguf")"
expect "mixed quant types listed" "Q4_K +13 tensors" "$out"
expect "mixed quant types listed (Q6_K)" "Q6_K +3 tensors" "$out"

# --dump writes the dequantized tensor; it must equal gguf-py's values byte for byte.
for t in Q6_K IQ4_XS Q5_1; do
  if "$exe" inspect "$shared/fixtures/quants/$t.gguf" --dump blk.0.ffn_down.weight --out "$tmp/$t.f32" 2> /dev/null &&
     cmp -s "$tmp/$t.f32" "$shared/fixtures/quants/$t.blk.0.ffn_down.weight.f32"; then
    echo "ok   [dump $t matches the reference]"
  else
    echo "FAIL [dump $t]"; failures=$((failures + 1))
  fi
done
err="$("$exe" inspect "$shared/models/stories260K.gguf" --dump nope --out "$tmp/x" 2>&1)"
expect "dump of an unknown tensor" "has no tensor named 'nope'" "$err"

# A damaged file: a clear error and exit 1, no crash.
head -c 5000 "$shared/models/stories260K.gguf" > "$tmp/cut.gguf"
err="$("$exe" inspect "$tmp/cut.gguf" 2>&1)"; rc=$?
[ $rc = 1 ] && echo "ok   [truncated file exits 1]" || { echo "FAIL [truncated file exit $rc]"; failures=$((failures + 1)); }
expect "truncated file message" "cut.gguf: the file is truncated" "$err"
err="$("$exe" inspect "$tmp/nothing.gguf" 2>&1)"; rc=$?
[ $rc = 1 ] && echo "ok   [missing file exits 1]" || { echo "FAIL [missing file exit $rc]"; failures=$((failures + 1)); }
expect "missing file message" "nothing.gguf does not exist" "$err"

echo "$failures failure(s)"
[ "$failures" = 0 ]
