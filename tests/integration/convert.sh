#!/usr/bin/env bash
# `switchyard convert`, `quantize` from a folder and `gguf split` / `merge` as a user drives
# them, on the shared tiny Qwen3 checkpoint. The checkpoint has no tokenizer: one is cut
# from the shared Qwen3 tokenizer (tiny_tokenizer.py) so the GGUF carries a real vocabulary
# and chat template, and text runs through both. With SWITCHYARD_PEER_CHECK=1, where
# llama.cpp is built, its llama-perplexity reads the converted file and agrees with the folder.
#   convert.sh SWITCHYARD SOURCE_DIR SHARED_DIR
set -uo pipefail
exe="$1"
src="$2"
shared="$3"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "${BASH_SOURCE[0]}")/check.sh"

require_shared "$shared" formats
bf16="$shared/formats/qwen3-tiny/bf16"
text="$src/tests/data/quality/story.txt"

# A folder as users download it: config.json, the safetensors and a tokenizer (linked, not copied).
model="$tmp/qwen3-tiny"
mkdir -p "$model"
ln -s "$bf16/config.json" "$model/config.json"
ln -s "$bf16/model.safetensors" "$model/model.safetensors"
python3 "$src/tests/integration/tiny_tokenizer.py" "$shared/tokenizers/qwen3/tokenizer.json" 512 "$model" > /dev/null

check "convert: a line per tensor, bf16 kept" 0 'token_embd\.weight +BF16 -> BF16' -- "$exe" convert "$model"
check "convert: the default name, in the folder" 0 'qwen3-tiny/ggml-model-auto\.gguf' -- ls "$model/ggml-model-auto.gguf"
gguf="$model/ggml-model-auto.gguf"
check "the GGUF has the tokenizer" 0 'tokenizer: +gpt2' -- "$exe" inspect "$gguf"
check "and the chat template" 0 'chat template: +present' -- "$exe" inspect "$gguf"
check "text tokenizes the same through both" 0 '^ok$' -- bash -c "
  a=\$('$exe' tokenize --tokenizer '$model/tokenizer.json' --text 'Once upon a time, there was a cat. <|im_end|>' --parse-special 2>/dev/null)
  b=\$('$exe' tokenize -m '$gguf' --text 'Once upon a time, there was a cat. <|im_end|>' --parse-special 2>/dev/null)
  [ -n \"\$a\" ] && [ \"\$a\" = \"\$b\" ] && echo ok || echo \"folder: \$a gguf: \$b\""
ppl() { "$exe" perplexity -m "$1" -f "$text" -c 64 --chunks 3 2>&1 | grep -Eo 'PPL = [0-9.]+ \+/- [0-9.]+'; }
folder_ppl="$(ppl "$model")"
check "the same perplexity from the folder and the GGUF" 0 "^${folder_ppl//+/\\+}\$" -- ppl "$gguf"

check "--outtype f16 and --outfile" 0 "wrote $tmp/f16\.gguf" -- "$exe" convert "$model" --outtype f16 --outfile "$tmp/f16.gguf"
check "the f16 file's types" 0 'F16 +[0-9]+ tensors' -- "$exe" inspect "$tmp/f16.gguf"
check "a quantized checkpoint: AWQ dequantized" 0 "read with format 'awq'" -- \
  "$exe" convert "$shared/formats/qwen3-tiny/awq-w4g128" --outfile "$tmp/awq.gguf"
check "a checkpoint without a tokenizer says so" 0 'no tokenizer\.json' -- \
  "$exe" convert "$bf16" --outfile "$tmp/bare.gguf"

check "quantize reads a folder" 0 "wrote $tmp/q8\.gguf" -- "$exe" quantize "$model" "$tmp/q8.gguf" Q8_0
check "and writes its types" 0 'Q8_0 +[0-9]+ tensors' -- "$exe" inspect "$tmp/q8.gguf"

check "convert: a missing folder" 1 'does not exist' -- "$exe" convert "$tmp/nothing"
check "convert: a GGUF is not a folder" 1 'already a GGUF file; `switchyard quantize`' -- "$exe" convert "$gguf" --outfile "$tmp/x.gguf"
check "convert: a bad --outtype" 1 'is not one of auto, f32, f16, bf16, q8_0' -- "$exe" convert "$model" --outtype q4_k
mkdir -p "$tmp/empty"
check "convert: a folder without a model" 1 'empty' -- "$exe" convert "$tmp/empty"
check_killed_midway "convert killed midway: the old file is untouched" "$tmp/kill.gguf" -- \
  "$exe" convert "$model" --outfile "$tmp/kill.gguf"

check "gguf split --dry-run names the shards" 0 "$tmp/part-00004-of-00004\.gguf" -- \
  "$exe" gguf split --split-max-tensors 8 --dry-run "$gguf" "$tmp/part"
check "and writes nothing" 0 '^0$' -- bash -c "ls '$tmp' | grep -c '^part-' || true"
check "gguf split" 0 'wrote 4 shards' -- "$exe" gguf split --split-max-tensors 8 "$gguf" "$tmp/part"
check "the set verifies" 0 'in 4 shards, every tensor inside its file' -- "$exe" verify "$tmp/part-00002-of-00004.gguf"
check "the set runs as one model" 0 "^${folder_ppl//+/\\+}\$" -- ppl "$tmp/part-00001-of-00004.gguf"
check "gguf merge" 0 "wrote $tmp/merged\.gguf" -- "$exe" gguf merge "$tmp/part-00003-of-00004.gguf" "$tmp/merged.gguf"
check "the merged file is the original's tensors" 0 "^${folder_ppl//+/\\+}\$" -- ppl "$tmp/merged.gguf"
check "gguf merge: one file is not a set" 1 'is not part of a split set' -- "$exe" gguf merge "$gguf" "$tmp/y.gguf"
rm "$tmp/part-00004-of-00004.gguf"
check "a set without its last shard is refused by name" 1 'part-00004-of-00004\.gguf' -- "$exe" gguf merge "$tmp/part-00001-of-00004.gguf" "$tmp/y.gguf"
check "gguf split: a bad size" 1 'give a size such as 512M or 2G' -- "$exe" gguf split --split-max-size 2T "$gguf" "$tmp/p"

if [ -n "$(peer_perplexity)" ]; then
  peer="$(peer_run -m "$gguf" -f "$text" -c 64 --chunks 3 | grep -Eo 'PPL = [0-9.]+' | head -1)"
  check "llama.cpp reads the converted file: PPL within 0.5% of the folder's" 0 '^ok$' -- python3 -c "
import sys
ours = float('$folder_ppl'.split()[2]); peer = float('${peer:-PPL = nan}'.split()[2])
print('ok' if abs(peer - ours) <= 0.005 * ours else f'ours {ours}, llama.cpp {peer}')"
else
  echo "note: the interoperability check with llama.cpp runs with SWITCHYARD_PEER_CHECK=1 where ../shared/tools/peer-llama-cpp built it"
fi

[ "$failures" = 0 ] || { echo "$failures failure(s)"; exit 1; }
