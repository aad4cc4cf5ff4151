#!/usr/bin/env bash
# `switchyard quantize` as a user drives it: llama-quantize's argument order, progress lines,
# the default output name, refusals, and an interrupted run: killed midway, it leaves no
# file under the final name and an older file there untouched. With SWITCHYARD_PEER_CHECK=1,
# where llama.cpp is built, its llama-perplexity reads our output.
#   quantize.sh SWITCHYARD SOURCE_DIR SHARED_DIR
set -uo pipefail
exe="$1"
src="$2"
shared="$3"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "${BASH_SOURCE[0]}")/check.sh"

require_shared "$shared" fixtures
f16="$shared/fixtures/llama-e256-f16.gguf"
q8="$shared/fixtures/llama-e256-q8_0.gguf"

check "INPUT OUTPUT TYPE THREADS, a line per tensor" 0 '\[  21/  21\] blk\.1\.ffn_down\.weight +F16 -> Q6_K' -- \
  "$exe" quantize "$f16" "$tmp/q4km.gguf" Q4_K_M 2
check "the file has the recipe's types" 0 'Q4_K +13 tensors' -- "$exe" inspect "$tmp/q4km.gguf"
check "the quantized file runs" 0 'Final estimate: PPL = ' -- \
  "$exe" perplexity -m "$tmp/q4km.gguf" -f "$src/tests/data/quality/story.txt" -c 128 --chunks 2
cp "$f16" "$tmp/model-f16.gguf"
check "without OUTPUT: ggml-model-TYPE.gguf beside the input" 0 "wrote $tmp/ggml-model-Q8_0.gguf" -- \
  "$exe" quantize "$tmp/model-f16.gguf" q8_0
check "--pure: every matrix in the type" 0 'Q4_K +16 tensors' -- \
  bash -c "'$exe' quantize --pure '$f16' '$tmp/pure.gguf' q4_k_m >/dev/null 2>&1 && '$exe' inspect '$tmp/pure.gguf'"
check "--tensor-type overrides the rules" 0 'Q8_0 +2 tensors' -- \
  bash -c "'$exe' quantize --tensor-type 'attn_v=q8_0' '$f16' '$tmp/tt.gguf' q4_k_m >/dev/null 2>&1 && '$exe' inspect '$tmp/tt.gguf'"

check "an unknown type lists the choices" 1 "'Q4_K_X' is not a type quantize writes; choose one of F32, F16, BF16, Q4_0" -- \
  "$exe" quantize "$f16" "$tmp/x.gguf" Q4_K_X
check "requantizing needs --allow-requantize" 1 "already Q8_0; quantizing it again compounds the error" -- \
  "$exe" quantize "$q8" "$tmp/x.gguf" q4_k_m
check "--allow-requantize" 0 "wrote $tmp/rq.gguf" -- "$exe" quantize --allow-requantize "$q8" "$tmp/rq.gguf" q4_k_m
check "the output is the input" 1 'is the input; write to another file' -- "$exe" quantize "$tmp/q4km.gguf" "$tmp/q4km.gguf" q8_0
check "a missing input" 1 'no-such.gguf' -- "$exe" quantize "$tmp/no-such.gguf" "$tmp/x.gguf" q8_0
check "a bad --tensor-type" 1 'give PATTERN=TYPE' -- "$exe" quantize --tensor-type attn_v "$f16" "$tmp/x.gguf" q8_0

check_killed_midway "killed midway: the old file is untouched, the new one was only a temporary" "$tmp/kill.gguf" -- \
  "$exe" quantize "$f16" "$tmp/kill.gguf" q4_k_m

if [ -n "$(peer_perplexity)" ]; then
  check "llama.cpp reads our Q4_K_M file" 0 'Final estimate: PPL = [0-9]' -- \
    peer_run -m "$tmp/q4km.gguf" -f "$src/tests/data/quality/story.txt" -c 128 --chunks 2
else
  echo "note: the interoperability check with llama.cpp runs with SWITCHYARD_PEER_CHECK=1 where ../shared/tools/peer-llama-cpp built it (its log lines can be lost under load, so ctest does not depend on it)"
fi

[ "$failures" = 0 ] || { echo "$failures failure(s)"; exit 1; }
echo "all quantize checks passed"
