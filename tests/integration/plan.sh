#!/usr/bin/env bash
# `switchyard synth` for real topologies and `switchyard plan` as a user drives them:
# a scaled qwen3.6-35b-a3b file with the intended shapes that runs, plan's JSON figures
# against hand computations, --explain, llama.cpp's spellings of the placement flags, and
# clear errors for bad input (sizes without units, the old -p, growing a topology).
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
  "$exe" plan --topology qwen3-30b-a3b --vram 24GiB --ram 64GiB --n-cpu-moe 4 --override 'blk\.0\.ffn_up_exps=cuda0' --cpu-bandwidth 50GB/s --explain
check "plan warns when the KV cache does not fit" 0 "warning: 131072 x 8 sequences need 96.00 GiB of KV cache" -- \
  "$exe" plan --topology qwen3-30b-a3b --vram 24GiB --ram 32GiB --ctx 131072 --parallel 8 --cpu-bandwidth 50GB/s
check "plan -P takes the pipeline's context and placement" 0 '"ctx": 8192.*"fits": true.*"gpu_layers": 41.*"kv_type": "q8_0"' -- \
  bash -c "'$exe' plan -P '$src/configs/chat-24gb.yaml' --topology qwen3.6-35b-a3b --vram 24GiB --ram 64GiB --cpu-bandwidth 50GB/s --json | tr -d '\n'"
check "plan -P with flags over the pipeline" 0 "context 32768 x 2 sequences, KV q8_0" -- \
  "$exe" plan -P "$src/configs/chat-24gb.yaml" --topology qwen3.6-35b-a3b --vram 24GiB --ctx 32768 --cpu-bandwidth 50GB/s
check "plan --pipeline is -P" 0 "context 32768 x 2 sequences, KV q8_0" -- \
  "$exe" plan --pipeline "$src/configs/chat-24gb.yaml" --topology qwen3.6-35b-a3b --vram 24GiB -c 32768 --cpu-bandwidth 50GB/s
check "plan -P says when the pipeline's model is not here" 2 "pass --topology NAME" -- \
  "$exe" plan -P "$src/configs/chat-24gb.yaml" --vram 24GiB
check "plan -p FILE points at -P" 2 "^switchyard plan: -p is the prompt, as in llama.cpp; the pipeline file is -P FILE \(did you mean -P\?\)$" -- \
  "$exe" plan -p "$src/configs/chat-24gb.yaml" --topology qwen3.6-35b-a3b --vram 24GiB
check "plan --set without a pipeline names -P" 2 "--set needs a pipeline \(-P FILE\)" -- \
  "$exe" plan --topology qwen3-8b --set context.length=8192
check "plan needs a model" 2 "give a model file" -- "$exe" plan
check "plan refuses an unknown KV type" 2 "--cache-type-k must be f32, f16, bf16, q8_0 or q4_0, not 'q5_1'" -- \
  "$exe" plan --topology qwen3-8b --kv q5_1
check "plan refuses an override to a missing device" 2 "names device 'gpu3'.*the devices are: gpu0, cpu" -- \
  "$exe" plan --topology qwen3-8b --vram 8GiB --override 'blk=gpu3' --cpu-bandwidth 50GB/s
check "plan refuses a bad size" 2 "--vram '24Gb\\?' is not a size" -- "$exe" plan --topology qwen3-8b --vram '24Gb?'

# llama.cpp's spellings (-ngl, -ot, -ctk, ... are rewritten to the long names by main.cpp).
# qwen3-30b-a3b has 48 layers (its published config.json); as in llama.cpp, the output head
# counts as one more layer for -ngl, so every layer on the GPU is gpu_layers 49.
q3=(--topology qwen3-30b-a3b --ram 64GiB --cpu-bandwidth 50GB/s)
check "plan -c, -np, -ub, -ctk read as --ctx, --parallel, --ubatch, --kv" 0 "context 16384 x 3 sequences, KV q8_0, ubatch 256" -- \
  "$exe" plan "${q3[@]}" --vram 24GiB -c 16384 -np 3 -ub 256 -ctk q8_0
check "plan --ctx-size, --ubatch-size, --cache-type-k with -ctv the same" 0 "context 16384 x 1 sequences, KV q8_0, ubatch 256" -- \
  "$exe" plan "${q3[@]}" --vram 24GiB --ctx-size 16384 --ubatch-size 256 --cache-type-k q8_0 -ctv q8_0
check "plan refuses a V cache type other than the K type" 2 "--cache-type-v q4_0: the V cache is kept in the K cache's type, q8_0 here; give --cache-type-k q4_0" -- \
  "$exe" plan "${q3[@]}" --vram 24GiB -ctk q8_0 -ctv q4_0
check "plan refuses -ctv alone unless it is the default f16" 2 "--cache-type-v q8_0: the V cache is kept in the K cache's type, f16 here" -- \
  "$exe" plan "${q3[@]}" --vram 24GiB -ctv q8_0
check "plan -ngl and --n-gpu-layers" 0 "placement  gpu_layers 49, cpu_moe 20$" -- \
  "$exe" plan "${q3[@]}" --vram 24GiB -ngl 99 --n-cpu-moe 20
check "plan --gpu-layers stays an alias" 0 "placement  gpu_layers 10, cpu_moe 0$" -- \
  "$exe" plan "${q3[@]}" --vram 24GiB --gpu-layers 10 -ncmoe 0
check "plan --cpu-moe alone puts every layer's experts in RAM" 0 "placement  gpu_layers 49, cpu_moe 48$" -- \
  "$exe" plan "${q3[@]}" --vram 24GiB --n-gpu-layers all --cpu-moe
check "plan -cmoe is --cpu-moe" 0 "placement  gpu_layers 49, cpu_moe 48$" -- \
  "$exe" plan "${q3[@]}" --vram 24GiB -ngl all -cmoe
check "plan --cpu-moe all points at the flag" 2 "--cpu-moe all: --cpu-moe takes no value .*write --cpu-moe, or --n-cpu-moe N" -- \
  "$exe" plan "${q3[@]}" --vram 24GiB --cpu-moe all
check "plan --cpu-moe N points at --n-cpu-moe" 2 "--cpu-moe 4: .*write --n-cpu-moe 4$" -- \
  "$exe" plan "${q3[@]}" --vram 24GiB --cpu-moe 4
check "plan refuses --cpu-moe with --n-cpu-moe" 2 "give --cpu-moe .* or --n-cpu-moe N .*, not both" -- \
  "$exe" plan "${q3[@]}" --vram 24GiB --cpu-moe --n-cpu-moe 4
check "plan -ot: a comma list, llama.cpp's upper-case buffer names" 0 "override 'blk\\\\.0\\\\.ffn_up_exps=gpu0'.*override 'blk\\\\.1\\\\.ffn_up_exps=cpu'" -- \
  bash -c "'$exe' plan ${q3[*]} --vram 24GiB --n-cpu-moe 4 -ot 'blk\.0\.ffn_up_exps=CUDA0,blk\.1\.ffn_up_exps=CPU' --explain | tr '\n' ' '"
check "plan --override-tensor Vulkan0 is gpu0" 0 "override 'blk\\\\.2\\\\.ffn_up_exps=gpu0'" -- \
  "$exe" plan "${q3[@]}" --vram 24GiB --n-cpu-moe 4 --override-tensor 'blk\.2\.ffn_up_exps=Vulkan0' --explain
check "plan -ot refuses an empty rule in the list" 2 "--override-tensor must be REGEX=DEVICE\[,REGEX=DEVICE...\].*got ''" -- \
  "$exe" plan "${q3[@]}" --vram 24GiB -ot 'blk=CPU,,exps=CPU'

# Sizes and bandwidths as people write them.
check "plan --vram 24 is refused" 2 "^switchyard plan: --vram 24: 24 bytes\? write 24GiB \(or 24GB\)$" -- \
  "$exe" plan --topology qwen3-8b --vram 24
check "plan --vram 24GiB,16 is refused" 2 "--vram 16: 16 bytes\? write 16GiB \(or 16GB\)" -- \
  "$exe" plan --topology qwen3-8b --vram 24GiB,16
check "plan --ram 64 is refused" 2 "--ram 64: 64 bytes\? write 64GiB \(or 64GB\)" -- "$exe" plan --topology qwen3-8b --ram 64
check "plan --headroom 10 is refused" 2 "--headroom 10: 10 bytes\? write 10% or 10GiB \(or 10GB\)" -- \
  "$exe" plan --topology qwen3-8b --headroom 10
check "plan --min-headroom 2 is refused" 2 "--min-headroom 2: 2 bytes\? write 2% or 2GiB" -- \
  "$exe" plan --topology qwen3-8b --min-headroom 2
# With no headroom the usable budget is the whole budget.
check "plan --headroom 0 --min-headroom 0: no headroom" 0 '"budget":25769803776,[^}]*"usable":25769803776' -- \
  bash -c "'$exe' plan --topology qwen3-8b --vram 24GiB --ram 64GiB --cpu-bandwidth 50GB/s --headroom 0 --min-headroom 0 --json | tr -d '\n '"
"$exe" plan --topology qwen3-8b --vram 0 --ram 64GiB --cpu-bandwidth 50GB/s --json > "$tmp/cpu.json"
check "plan --vram 0 is CPU only" 0 "^cpu$" -- python3 -c \
  'import json, sys; print(" ".join(d["name"] for d in json.load(open(sys.argv[1]))["devices"]))' "$tmp/cpu.json"
check "plan --gpu-bandwidth 0 is refused" 2 "--gpu-bandwidth 0: a bandwidth must be more than 0, like 900GB/s" -- \
  "$exe" plan --topology qwen3-8b --vram 24GiB --gpu-bandwidth 0
check "plan --cpu-bandwidth 0GB/s is refused" 2 "--cpu-bandwidth 0GB/s: a bandwidth must be more than 0, like 60GB/s" -- \
  "$exe" plan --topology qwen3-8b --cpu-bandwidth 0GB/s
check "plan --gpu-bandwidth 900 needs a unit" 2 "--gpu-bandwidth 900: write a unit, like 900GB/s" -- \
  "$exe" plan --topology qwen3-8b --vram 24GiB --gpu-bandwidth 900
check "plan --gpu-bandwidth 936GB and --cpu-bandwidth 60GB/s" 0 "gpu0 936.0 GB/s given; cpu 60.0 GB/s given;" -- \
  "$exe" plan --topology qwen3-8b --vram 24GiB --gpu-bandwidth 936GB --cpu-bandwidth 60GB/s

# Growing a topology past its real shape (qwen3-8b: 36 layers; demo-llama: 4, docs/synth.md).
check "plan --layers past the topology's layers is refused" 2 "--layers 40 is more than the 36 layers qwen3-8b has; give at most 36, or add --grow" -- \
  "$exe" plan --topology qwen3-8b --layers 40
check "plan --layers 40 --grow plans 40 layers" 0 "qwen3, 40 layers" -- \
  "$exe" plan --topology qwen3-8b --layers 40 --grow --ram 64GiB --cpu-bandwidth 50GB/s
check "synth --layers past the topology's layers is refused" 2 "--layers 6 is more than the 4 layers demo-llama has; give at most 4, or add --grow" -- \
  "$exe" synth --topology demo-llama --layers 6 -o "$tmp/x.gguf"
check "synth --experts past the topology's experts is refused" 2 "--experts 16 is more than the 8 routed experts per layer demo has" -- \
  "$exe" synth --topology demo --experts 16 -o "$tmp/x.gguf"
test -e "$tmp/x.gguf" && { echo "FAIL: a refused synth left a file"; failures=$((failures + 1)); }
check "synth --layers 6 --grow writes 6 layers" 0 "wrote .*demo-llama \(q8_0\), 6 layers" -- \
  "$exe" synth --topology demo-llama --layers 6 --grow -o "$tmp/grown.gguf"
check "inspect: the grown file has blk.5" 0 "blk\.5\.attn_q\.weight" -- "$exe" inspect --tensors "$tmp/grown.gguf"

# --seed -1: a random seed, printed, that writes the same bytes when given back.
"$exe" synth --topology demo-llama --seed -1 -o "$tmp/r1.gguf" > /dev/null 2> "$tmp/seed.txt"
check "synth --seed -1 prints its seed" 0 "^seed: [0-9]+ \(random\)$" -- cat "$tmp/seed.txt"
seed="$(sed -n 's/^seed: \([0-9]*\) (random)$/\1/p' "$tmp/seed.txt")"
check "synth --seed N with the printed seed writes the same file" 0 "^same$" -- \
  bash -c "'$exe' synth --topology demo-llama --seed '$seed' -o '$tmp/r2.gguf' > /dev/null && cmp '$tmp/r1.gguf' '$tmp/r2.gguf' && echo same"
check "synth --seed -2 is refused, naming -1" 2 "--seed: must be an integer from 0 to 18446744073709551615, got '-2' \(or -1 for a random seed\)" -- \
  "$exe" synth --topology demo-llama --seed -2 -o "$tmp/x.gguf"

# Repacked layouts: plan counts the Q4_K, Q4_0 and Q8_0 (and I4_G*, absent here) matrices this machine's CPU would rearrange at load.
# The expected bytes come from the file's tensor table read by the GGUF specification
# (gguf_tensors.py): every such matrix of whole 16-row groups except token_embd, when the
# CPU has what the interleaved kernels need (/proc/cpuinfo: AVX2, FMA and F16C for Q4_K, Q6_K,
# Q4_0 and Q8_0, and SWITCHYARD_CPU_ISA is not scalar), else none.
"$exe" synth --topology qwen3-8b --layers 1 --vocab 4096 --type q4_k_m -o "$tmp/q4km.gguf" > /dev/null 2>&1
feature=0
if grep -qw avx2 /proc/cpuinfo && grep -qw fma /proc/cpuinfo && grep -qw f16c /proc/cpuinfo &&
   [ "${SWITCHYARD_CPU_ISA:-avx512}" != scalar ]; then feature=1; fi
want=$(python3 "$(dirname "${BASH_SOURCE[0]}")/gguf_tensors.py" "$tmp/q4km.gguf" | python3 -c '
import json, sys
feature = sys.argv[1] == "1"
ts = json.load(sys.stdin)
print(sum(t["bytes"] for t in ts if feature and t["type"] in ("Q4_K", "Q6_K", "Q4_0", "Q8_0") and t["name"] != "token_embd.weight"
          and len(t["shape"]) >= 2 and t["shape"][1] % 16 == 0))' "$feature")
check "plan --json counts the bytes the CPU repacks at load" 0 "\"cpu_repacked_bytes\": $want," -- \
  "$exe" plan -m "$tmp/q4km.gguf" --json --cpu-bandwidth 50GB/s
if [ "$want" != 0 ]; then
  check "plan prints the repacked bytes" 0 "repacked at load  cpu: .* of Q4_K, Q6_K, Q4_0, Q8_0 and I4_G\* weights into 16-row interleaved layouts" -- \
    "$exe" plan -m "$tmp/q4km.gguf" --cpu-bandwidth 50GB/s
  printf 'model:\n  path: %s\nbackends:\n  - plugin: cpu\n    repack: false\n' "$tmp/q4km.gguf" > "$tmp/norepack.yaml"
  check "plan with repack off counts none" 0 "\"cpu_repacked_bytes\": 0," -- \
    "$exe" plan -P "$tmp/norepack.yaml" --json --cpu-bandwidth 50GB/s
fi

[ "$failures" -eq 0 ] || { echo "$failures check(s) failed"; exit 1; }
echo "all plan checks passed"
