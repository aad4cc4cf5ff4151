#!/usr/bin/env bash
# `switchyard synth` and `switchyard run` as a user drives them: JSON output, logits files,
# teacher forcing, and clear errors for bad input. With the shared data: the demo
# pipeline's 64 greedy tokens equal llama.cpp's (stories260K.ref.json).
set -uo pipefail
exe="$1"
src="$2"
shared="$3"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "${BASH_SOURCE[0]}")/check.sh"

m="$tmp/demo.gguf"
# run -m samples with a random seed, and the demo vocabulary has end-of-generation tokens:
# checks that count tokens pass --ignore-eos.
check "synth writes the demo model" 0 "wrote" -- "$exe" synth -o "$m"
check "synth refuses an unknown topology" 2 "unknown topology 'gpt5'; built in: qwen3.6-35b-a3b" -- "$exe" synth --topology gpt5 -o "$tmp/x.gguf"
check "inspect shows the demo model's shape" 0 "qwen35moe" -- "$exe" inspect "$m"
check "run --json" 0 '"prompt_ids":\[1,2,3\].*"ids":\[[0-9]+(,[0-9]+){7}\].*"tokens_per_s"' -- \
  "$exe" run -m "$m" --prompt-ids 1,2,3 -n 8 --json --ignore-eos
check "run prints ids and timings" 0 "generation: 4 tokens, 3 steps after the first in .* ms" -- "$exe" run -m "$m" --prompt-ids 1,2,3 -n 4 --ignore-eos
check "teacher forcing feeds the given ids" 0 '"ids":\[5,6,7\]' -- "$exe" run -m "$m" --prompt-ids 1,2 --force-ids 5,6,7 --json

"$exe" run -m "$m" --prompt-ids 1,2,3 -n 4 --ignore-eos --logits-out "$tmp/l.jsonl" > /dev/null 2>&1
lines=$(wc -l < "$tmp/l.jsonl")
if [ "$lines" = 5 ] && head -1 "$tmp/l.jsonl" | grep -Eq '^\{"pos":2,"top":\[\[[0-9]+,[-0-9.e]+\](,\[[0-9]+,[-0-9.e]+\]){19}\],"logits":\[[^]]+\]\}$'; then
  echo "ok   [--logits-out: one line per position with pos, top 20 and logits]"
else
  echo "FAIL [--logits-out]: $lines lines"; head -c 300 "$tmp/l.jsonl"; failures=$((failures + 1))
fi

check "no model" 1 "give a model \(-m FILE\) or a pipeline \(-P FILE\)" -- "$exe" run --prompt-ids 1
check "missing model file" 1 "^-m .*nope.gguf: 'model.path': file '.*nope.gguf' does not exist" -- "$exe" run -m "$tmp/nope.gguf" --prompt-ids 1
check "bad prompt ids" 1 "--prompt-ids: 'x' is not a token id" -- "$exe" run -m "$m" --prompt-ids 1,x
check "token outside the vocabulary" 1 "token id 9999 is outside the vocabulary \(0..511\)" -- "$exe" run -m "$m" --prompt-ids 1,9999
# A 16-token context holds the 10-token prompt and 6 generated tokens; the 7th is sampled
# from the full cache and never stored, so 7 tokens come out and the 8th cannot.
check "-n past the context stops there, says so, and prints the JSON" 0 \
  '"ids":\[[0-9]+(,[0-9]+){6}\],.*"stop_reason":"context"' -- \
  "$exe" run -m "$m" --prompt-ids 1,2,3,4,5,6,7,8,9,10 -n 8 --ignore-eos --set context.length=16 --json
check "-n past the context is announced before generating" 0 "the prompt's 10 tokens and -n 8 exceed the 16-token context; generation stops when the context is full, after at most 7 tokens" -- \
  "$exe" run -m "$m" --prompt-ids 1,2,3,4,5,6,7,8,9,10 -n 8 --ignore-eos -c 16
check "-n that fits the context exactly is a normal end" 0 '"ids":\[[0-9]+(,[0-9]+){6}\],.*"stop_reason":"length"' -- \
  "$exe" run -m "$m" --prompt-ids 1,2,3,4,5,6,7,8,9,10 -n 7 --ignore-eos -c 16 --json
check "-n -1 generates until the context is full" 0 '"ids":\[[0-9]+(,[0-9]+){13}\],.*"stop_reason":"context"' -- \
  "$exe" run -m "$m" --prompt-ids 1,2,3 -n -1 --ignore-eos -c 16 --json
check "a prompt as long as the context is refused with both numbers" 1 \
  "the prompt has 16 tokens and the context holds 16 \(context.length\), leaving no room to generate; raise -c or shorten the prompt" -- \
  "$exe" run -m "$m" --prompt-ids 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16 -n 1 -c 16
# --no-mmap reads the weights into RAM: nothing is used from the mapping, and the same
# greedy run gives the same ids as the mapped one.
mapped=$("$exe" run -m "$m" --prompt-ids 1,2,3 -n 8 --ignore-eos --set "sampling=[greedy]" --json 2>/dev/null | grep -o '"ids":\[[^]]*\]')
check "--no-mmap reads the weights and computes the same tokens" 0 "$(printf '%s' "$mapped" | sed 's/[][]/\\&/g').*\"weights_mapped_bytes\":0," -- \
  "$exe" run -m "$m" --prompt-ids 1,2,3 -n 8 --ignore-eos --set "sampling=[greedy]" --json --no-mmap
# By default every weight is used from the mapping except those the CPU repacks at load
# (Q4_K, Q4_0 and Q8_0 where it has the VNNI kernels); with repack off, all of them.
stats=$("$exe" run -m "$m" --prompt-ids 1 -n 1 --json 2>/dev/null)
w=$(grep -o '"weights_bytes":[0-9]*' <<< "$stats" | cut -d: -f2)
mb=$(grep -o '"weights_mapped_bytes":[0-9]*' <<< "$stats" | cut -d: -f2)
rb=$(grep -o '"weights_repacked_bytes":[0-9]*' <<< "$stats" | cut -d: -f2)
check "weights are used from the mapping or repacked, by default" 0 "^$w\$" -- echo "$((${mb:-0} + ${rb:-0}))"
printf 'model:\n  path: %s\nbackends:\n  - plugin: cpu\n    repack: false\n' "$m" > "$tmp/norepack.yaml"
check "with repack off every weight is used from the mapping" 0 '"weights_bytes":([0-9]+),"weights_mapped_bytes":\1,.*"weights_repacked_bytes":0,' -- \
  "$exe" run -P "$tmp/norepack.yaml" --prompt-ids 1 -n 1 --json
# Locking needs the memlock limit (or CAP_IPC_LOCK): either every byte is locked, or a
# warning says how to allow it; the run goes on in both cases.
check "--mlock locks the weights or says how to allow it" 0 '"weights_bytes":([0-9]+),"weights_mapped_bytes":[0-9]+,"weights_locked_bytes":\1,|could not lock the weights in RAM' -- \
  "$exe" run -m "$m" --prompt-ids 1 -n 1 --json --mlock
# Prefaulting: an embedding table that only get_rows reads (the model has output.weight)
# stays out of it, so its pages are resident only for the rows a prompt touches; a tied
# table is the output head, read whole every step, and is prefaulted. The expected bytes
# come from the tensor table (inspect); 0 is allowed for kernels before 5.14, which refuse
# MADV_POPULATE_READ.
prefault_check() {
  local name="$1" model="$2" embd_prefaulted="$3"
  local embd json
  embd=$("$exe" inspect "$model" --json --tensors 2>/dev/null | python3 -c '
import json, sys
print(next(t["bytes"] for t in json.load(sys.stdin)["tensors"] if t["name"] == "token_embd.weight"))')
  json=$("$exe" run -m "$model" --prompt-ids 1 -n 1 --json 2>/dev/null)
  if python3 -c '
import json, sys
s = json.loads(sys.argv[1])["stats"]
mapped, pre, embd, tied = s["weights_mapped_bytes"], s["weights_prefaulted_bytes"], int(sys.argv[2]), sys.argv[3] == "1"
want = mapped if tied else mapped - embd
sys.exit(0 if pre == 0 or want <= pre < want + 65536 else 1)' "$json" "$embd" "$embd_prefaulted"; then
    echo "ok   [$name]"
  else
    echo "FAIL [$name]: $(grep -o '"weights_[a-z]*_bytes":[0-9]*' <<< "$json" | tr '\n' ' ') token_embd $embd bytes"; failures=$((failures + 1))
  fi
}
"$exe" synth --topology demo-llama --vocab 65536 -o "$tmp/untied.gguf" > /dev/null 2>&1
"$exe" synth --topology qwen3-0.6b --layers 1 --vocab 16384 -o "$tmp/tied.gguf" > /dev/null 2>&1
prefault_check "an embedding table read by rows only is not prefaulted" "$tmp/untied.gguf" 0
prefault_check "a tied embedding table (the output head) is prefaulted" "$tmp/tied.gguf" 1
check "q8_0 KV runs" 0 '"ids":\[' -- "$exe" run -m "$m" --prompt-ids 1,2,3 -n 4 --json --set context.kv_type=q8_0
check "fp8 KV is refused clearly" 1 "kv_type fp8 has no attention kernel" -- "$exe" run -m "$m" --prompt-ids 1 --set context.kv_type=fp8
check "bad override" 1 "context.kv_type" -- "$exe" run -m "$m" --prompt-ids 1 --set context.kv_type=q9_0
head -c 100000 "$m" > "$tmp/truncated.gguf"
check "truncated model file" 1 "truncated.gguf" -- "$exe" run -m "$tmp/truncated.gguf" --prompt-ids 1
check "force-ids shorter than -n" 1 "--force-ids has 2 ids but -n asks for 3" -- "$exe" run -m "$m" --prompt-ids 1 --force-ids 4,5 -n 3

if [ -f "$shared/models/stories260K.gguf" ]; then
  check "a text prompt goes through the model's tokenizer" 0 '"prompt_ids":\[1,403,407,261,378\].*"text":", there was' -- \
    "$exe" run -m "$shared/models/stories260K.gguf" --prompt "Once upon a time" -n 6 --json --set "sampling=[greedy]"
  check "--stop ends the text right before the stop string" 0 '"text":", there was a little ","stop_reason":"stop"' -- \
    "$exe" run -m "$shared/models/stories260K.gguf" --prompt "Once upon a time" -n 30 --json --set "sampling=[greedy]" --stop girl
  printf 'Once upon a time' > "$tmp/prompt.txt"
  check "--prompt-file" 0 '"prompt_ids":\[1,403,407,261,378\]' -- \
    "$exe" run -m "$shared/models/stories260K.gguf" --prompt-file "$tmp/prompt.txt" -n 2 --json
  check "prompt from stdin" 0 '"prompt_ids":\[1,403,407,261,378\]' -- \
    bash -c "printf 'Once upon a time' | '$exe' run -m '$shared/models/stories260K.gguf' -n 2 --json"
  check "tokenize" 0 '^1 403 407 261 378$' -- "$exe" tokenize -m "$shared/models/stories260K.gguf" --text "Once upon a time" --add-special
  check "tokenize --json" 0 '"pieces":\["<s>"," Once"," upon"," a"," time"\]' -- \
    "$exe" tokenize -m "$shared/models/stories260K.gguf" --text "Once upon a time" --add-special --json
  check "detokenize prints the text exactly" 0 "^<s> Once upon a time$" -- "$exe" detokenize -m "$shared/models/stories260K.gguf" --ids 1,403,407,261,378
  check "detokenize drops the leading space SentencePiece added" 0 "^Once upon a time$" -- "$exe" detokenize -m "$shared/models/stories260K.gguf" --ids 403,407,261,378
  check "detokenize refuses an id outside the vocabulary" 1 "token id 600 is outside the vocabulary \(0..511\)" -- \
    "$exe" detokenize -m "$shared/models/stories260K.gguf" --ids 1,600
fi
"$exe" synth -o "$tmp/notok.gguf" --no-tokenizer > /dev/null
check "-p without a tokenizer" 1 "-p needs a tokenizer and this model has none" -- "$exe" run -m "$tmp/notok.gguf" --prompt "hi"
check "the demo model has a tokenizer: text in, text out" 0 '"prompt_ids":\[1,.*"text":' -- \
  "$exe" run -m "$m" --prompt "Once upon a time" -n 8 --seed 1 --json
check "chat on the demo model with its own template (piped)" 0 "\[sampling:" -- \
  bash -c "printf 'Hello there\n/params\n' | '$exe' chat -m '$m' -n 8 --seed 1"
check "tokenize needs a tokenizer source" 1 "give a model \(-m FILE\) or a tokenizer" -- "$exe" tokenize --text hi

if [ -f "$shared/fixtures/stories260K.ref.json" ]; then
  want=$(tr -d ' \n' < "$shared/fixtures/stories260K.ref.json" | grep -o '"greedy_ids":\[[^]]*\]' | head -1 | sed 's/"greedy_ids"/"ids"/')
  got=$(cd "$src" && "$exe" run -P configs/demo.yaml --prompt-ids 1,403,407,261,378 -n 64 --json 2>/dev/null | grep -o '"ids":\[[^]]*\]')
  if [ -n "$want" ] && [ "$got" = "$want" ]; then
    echo "ok   [demo pipeline: 64 greedy tokens of stories260K equal llama.cpp's]"
  else
    echo "FAIL [demo pipeline greedy ids]"; echo "want $want"; echo "got  $got"; failures=$((failures + 1))
  fi
else
  echo "skip [demo pipeline greedy ids: no shared data]"
fi

if [ "$failures" -gt 0 ]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "all run checks passed"
