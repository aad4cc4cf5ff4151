#!/usr/bin/env bash
# Hugging Face model folders (shared/formats) through the CLI as a user would: inspect a
# folder or its .safetensors file, run from token ids, and the refusals (a quantized folder,
# a truncated download) as one sentence each.
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
expect() {  # expect NAME REGEX TEXT
  if grep -Eq -- "$2" <<< "$3"; then echo "ok   [$1]"; else echo "FAIL [$1]: no /$2/"; printf '%s\n' "$3" | head -30; failures=$((failures + 1)); fi
}
moe="$shared/formats/qwen3moe-tiny/bf16"

out="$("$exe" inspect "$moe" 2>&1)"
expect "inspect folder: reader" "\(hf\)" "$out"
expect "inspect folder: architecture" "architecture: +qwen3moe" "$out"
expect "inspect folder: experts" "qwen3moe.expert_count = 8" "$out"
expect "inspect folder: expert width" "qwen3moe.expert_feed_forward_length = 128" "$out"
expect "inspect folder: tensors" "tensors: +27," "$out"
out="$("$exe" inspect --tensors "$moe/model.safetensors" 2>&1)"
expect "inspect file: stacked experts" "blk.1.ffn_gate_exps.weight +BF16 +\[256, 128, 8\]" "$out"
expect "inspect file: F32 router" "blk.0.ffn_gate_inp.weight +F32 +\[256, 8\]" "$out"
out="$("$exe" inspect --tensors "$shared/formats/qwen3moe-tiny/bf16-fused-experts" 2>&1)"
expect "inspect fused: gate_up as one tensor" "blk.0.ffn_gate_up_exps.weight +BF16 +\[256, 256, 8\]" "$out"
out="$("$exe" plugins 2>&1)"
expect "plugins: hf listed" "hf" "$out"

# Per-expert and fused experts are two layouts of one model: the same greedy ids.
ids="1,231,124,66,187,416,413,184,118,506,481,274"
a="$("$exe" run -m "$moe" --prompt-ids "$ids" -n 6 --temp 0 --json 2> /dev/null | grep -o '"ids":\[[0-9,]*\]')"
b="$("$exe" run -m "$shared/formats/qwen3moe-tiny/bf16-fused-experts" --prompt-ids "$ids" -n 6 --temp 0 --json 2> /dev/null | grep -o '"ids":\[[0-9,]*\]')"
expect "run: ids generated" '"ids":\[[0-9]+(,[0-9]+){5}\]' "$a"
if [ -n "$a" ] && [ "$a" = "$b" ]; then echo "ok   [run: fused experts give the per-expert ids]"; else echo "FAIL [run: $a vs $b]"; failures=$((failures + 1)); fi

# A quantized folder is not read as unquantized: its own plugin reads it, or this names it.
out="$("$exe" inspect "$shared/formats/qwen3-tiny/awq-w4g128" 2>&1)"
expect "quantized folder: awq named" "awq" "$out"

# A truncated download ends with a sentence naming the file.
mkdir -p "$tmp/cut"
cp "$moe/config.json" "$tmp/cut/"
head -c 100000 "$moe/model.safetensors" > "$tmp/cut/model.safetensors"
out="$("$exe" inspect "$tmp/cut" 2>&1)"; rc=$?
expect "truncated: refused" "model.safetensors: tensor '[^']+' has data_offsets \[[0-9]+, [0-9]+\], past the end of the data section" "$out"
[ "$rc" -ne 0 ] && echo "ok   [truncated: exit status $rc]" || { echo "FAIL [truncated: exit 0]"; failures=$((failures + 1)); }
if grep -q "Segmentation\|Aborted\|terminate" <<< "$out"; then echo "FAIL [truncated: crashed]"; failures=$((failures + 1)); fi

[ "$failures" -eq 0 ] && echo "passed" || { echo "FAILED: $failures checks"; exit 1; }
