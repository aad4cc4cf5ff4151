#!/usr/bin/env bash
# `switchyard imatrix` and `quantize --imatrix` as a user drives them: an importance matrix
# of stories260K on a text, quantizing with it (ours and llama.cpp's files alike), and the
# refusals. With SWITCHYARD_PEER_CHECK=1, where llama.cpp is built, llama-quantize reads our
# matrix too.
#   imatrix.sh SWITCHYARD SOURCE_DIR SHARED_DIR
set -uo pipefail
exe="$1"
src="$2"
shared="$3"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "${BASH_SOURCE[0]}")/check.sh"

require_shared "$shared" models
model="$shared/models/stories260K.gguf"
text="$src/tests/data/quality/story.txt"
theirs="$src/tests/data/quality/stories260K-story-c128.llama-imatrix.gguf"

check "imatrix: chunks, perplexity, the file" 0 'imatrix: 35 matrices; final PPL 4\.34' -- \
  "$exe" imatrix -m "$model" -f "$text" -c 128 -o "$tmp/im.gguf"
check "the file holds llama.cpp's tensors" 0 'blk\.0\.attn_q\.weight\.in_sum2 +F32 +\[64, 1\]' -- "$exe" inspect "$tmp/im.gguf" --tensors
check "quantize --imatrix" 0 'quantize: 30 tensors quantized with importance weights' -- \
  "$exe" quantize --imatrix "$tmp/im.gguf" "$model" "$tmp/q4_1.gguf" Q4_1
check "the weighted file runs" 0 'Final estimate: PPL = ' -- "$exe" perplexity -m "$tmp/q4_1.gguf" -f "$text" -c 128 --chunks 2
check "quantize --imatrix reads llama-imatrix's file" 0 'quantize: 30 tensors quantized with importance weights' -- \
  "$exe" quantize --imatrix "$theirs" "$model" "$tmp/q4_1-theirs.gguf" Q4_1
check "a matrix made for another model" 1 "tensor 'blk\.0\.attn_q\.weight', which has 1 x 256; it was made for another model" -- \
  "$exe" quantize --imatrix "$tmp/im.gguf" "$shared/fixtures/llama-e256-f16.gguf" "$tmp/x.gguf" Q4_0
check "a model is not a matrix" 1 'is not an importance matrix' -- "$exe" quantize --imatrix "$model" "$model" "$tmp/x.gguf" Q4_0
check "a missing matrix" 1 "--imatrix '.*nothing\.gguf' does not exist" -- "$exe" quantize --imatrix "$tmp/nothing.gguf" "$model" "$tmp/x.gguf" Q4_0
check "imatrix without a text" 1 'give the text to collect on: -f FILE' -- "$exe" imatrix -m "$model"
check "imatrix: a text too short for two chunks" 1 'tokens' -- bash -c "echo 'Once upon a time' > '$tmp/short.txt'; '$exe' imatrix -m '$model' -f '$tmp/short.txt' -c 128 -o '$tmp/s.gguf'"

if [ -n "$(peer_perplexity)" ] && [ -x "$(dirname "$(peer_perplexity)")/llama-quantize" ]; then
  bin="$(dirname "$(peer_perplexity)")"
  check "llama-quantize reads our matrix" 0 'loaded [0-9]+ importance matrix entries' -- \
    env LD_LIBRARY_PATH="$bin" "$bin/llama-quantize" --imatrix "$tmp/im.gguf" "$model" "$tmp/peer-q4_1.gguf" Q4_1 2
else
  echo "note: the interoperability check with llama-quantize runs with SWITCHYARD_PEER_CHECK=1 where ../shared/tools/peer-llama-cpp built it"
fi

[ "$failures" = 0 ] || { echo "$failures failure(s)"; exit 1; }
