#!/usr/bin/env bash
# `switchyard synth` for real topologies and `switchyard plan` as a user drives them:
# a scaled qwen3.6-35b-a3b file with the intended shapes that runs, plan's JSON figures
# against hand computations, --explain, and clear errors for bad input.
set -uo pipefail
exe="$1"
src="$2"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "${BASH_SOURCE[0]}")/check.sh"

m="$tmp/q36.gguf"
check "synth writes a scaled qwen3.6-35b-a3b" 0 "wrote .*qwen3.6-35b-a3b \(q4_k_m\), 4 layers" -- \
  "$exe" synth --topology qwen3.6-35b-a3b --layers 4 --experts 8 --vocab 1024 --type q4_k_m -o "$m"
check "inspect: gated q projection of the full-attention layer" 0 "blk\.3\.attn_q\.weight +Q4_K +\[2048, 8192\]" -- \
  "$exe" inspect --tensors "$m"
check "inspect: experts and the Q6_K head" 0 "blk\.0\.ffn_up_exps\.weight +Q4_K +\[2048, 512, 8\].*output\.weight +Q6_K +\[2048, 1024\]" -- \
  bash -c "'$exe' inspect --tensors '$m' | tr '\n' ' '"
check "the synth file runs and reports routing" 0 "routing: 4 MoE layers; fewest experts chosen in a layer: [0-9]+/8" -- \
  "$exe" run -m "$m" --prompt-ids 300,301,302,303,304,305,306,307,308,309,310,311 -n 4 --routing-stats
check "synth --list names the built-in topologies" 0 "qwen3-30b-a3b.*mixtral-8x7b" -- bash -c "'$exe' synth --list | tr '\n' ' '"
check "synth refuses a layer count that breaks the hybrid pattern" 2 "multiple of 4" -- \
  "$exe" synth --topology qwen3.6-35b-a3b --layers 6 -o "$tmp/x.gguf"
check "synth refuses an unknown type" 2 "choose one of q4_k_m" -- "$exe" synth --topology qwen3-0.6b --type q9 -o "$tmp/x.gguf"
test -e "$tmp/x.gguf" && { echo "FAIL: a refused synth left a file"; failures=$((failures + 1)); }

# plan: figures written out by hand in tests/unit/test_planner.cpp and docs/tuning.md.
plan="$tmp/plan.json"
"$exe" plan --topology qwen3.6-35b-a3b --vram 24GiB --ram 64GiB --ctx 32768 --parallel 2 --cpu-bandwidth 50GB/s --json > "$plan"
check "plan --json: KV per token, state per sequence" 0 '"kv_bytes_per_token": 20480.*"recurrent_state_bytes_per_sequence": 65863680' -- \
  bash -c "tr -d '\n' < '$plan'"
check "plan --json: KV for 32768 x 2" 0 '"kv_bytes": 1342177280' -- cat "$plan"
check "plan --json: has the required fields" 0 "ok" -- python3 - "$plan" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
for k in ["kv_bytes_per_token", "recurrent_state_bytes_per_sequence", "weights_bytes", "cpu_moe", "max_context", "devices"]:
    assert k in j, k
assert j["weights_bytes"]["total"] == sum(j["weights_bytes"]["per_device"].values())
for d in j["devices"]:
    assert d["total"] == d["weights"] + d["kv"] + d["recurrent"] + d["compute"] + d["overhead"], d
    if j["fits"]:
        assert d["total"] <= d["usable"] <= d["budget"], d
print("ok")
PY
check "plan -m reads a file's header" 0 "model +q36.gguf: qwen35moe, 4 layers" -- "$exe" plan -m "$m" --vram 8GiB --cpu-bandwidth 50GB/s
check "plan --explain says why" 0 "cpu_moe [0-9]+: routed experts of layers 0-" -- \
  "$exe" plan --topology qwen3-30b-a3b --vram 12GiB --ram 64GiB --cpu-bandwidth 50GB/s --explain
check "plan: an override beats cpu_moe" 0 "override 'blk\\\\.0\\\\.ffn_up_exps=gpu0'" -- \
  "$exe" plan --topology qwen3-30b-a3b --vram 24GiB --ram 64GiB --cpu-moe 4 --override 'blk\.0\.ffn_up_exps=cuda0' --cpu-bandwidth 50GB/s --explain
check "plan warns when the KV cache does not fit" 0 "warning: 131072 x 8 sequences need 96.00 GiB of KV cache" -- \
  "$exe" plan --topology qwen3-30b-a3b --vram 24GiB --ram 32GiB --ctx 131072 --parallel 8 --cpu-bandwidth 50GB/s
check "plan -p takes the pipeline's context and placement" 0 '"ctx": 8192.*"fits": true.*"gpu_layers": 41.*"kv_type": "q8_0"' -- \
  bash -c "'$exe' plan -p '$src/configs/chat-24gb.yaml' --topology qwen3.6-35b-a3b --vram 24GiB --ram 64GiB --cpu-bandwidth 50GB/s --json | tr -d '\n'"
check "plan -p with flags over the pipeline" 0 "context 32768 x 2 sequences, KV q8_0" -- \
  "$exe" plan -p "$src/configs/chat-24gb.yaml" --topology qwen3.6-35b-a3b --vram 24GiB --ctx 32768 --cpu-bandwidth 50GB/s
check "plan -p says when the pipeline's model is not here" 2 "pass --topology NAME" -- \
  "$exe" plan -p "$src/configs/chat-24gb.yaml" --vram 24GiB
check "plan needs a model" 2 "give a model file" -- "$exe" plan
check "plan refuses an unknown KV type" 2 "--kv must be f32, f16, bf16, q8_0 or q4_0" -- "$exe" plan --topology qwen3-8b --kv q5_1
check "plan refuses an override to a missing device" 2 "names device 'gpu3'.*the devices are: gpu0, cpu" -- \
  "$exe" plan --topology qwen3-8b --vram 8GiB --override 'blk=gpu3' --cpu-bandwidth 50GB/s
check "plan refuses a bad size" 2 "--vram '24Gb\\?' is not a size" -- "$exe" plan --topology qwen3-8b --vram '24Gb?'

[ "$failures" -eq 0 ] || { echo "$failures check(s) failed"; exit 1; }
echo "all plan checks passed"
