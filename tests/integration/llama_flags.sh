#!/usr/bin/env bash
# llama.cpp's flags on run and chat, each checked against the pipeline key the table in
# docs/cli.md maps it to (through --print-pipeline, which prints the pipeline after every
# override), plus the composition rules: --set into shorthand forms, extends merging a
# model mapping, flags applied after --set, and Ctrl-C ending a run with its output.
set -uo pipefail
exe="$1"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "${BASH_SOURCE[0]}")/check.sh"

m="$tmp/demo.gguf"
"$exe" synth -o "$m" > /dev/null || { echo "FAIL: synth"; exit 1; }
pp() { "$exe" run -m "$m" --print-pipeline "$@"; }

check "-c sets context.length" 0 "length: 8192" -- pp -c 8192
# The demo topology states its trained length in qwen35moe.context_length (read with inspect).
trained=$("$exe" inspect --json "$m" | grep -o '"qwen35moe.context_length": *[0-9]*' | grep -o '[0-9]*$')
check "-c 0 is the model's trained length" 0 "length: $trained" -- pp --set context.length=64 -c 0
check "--ctx-size is -c" 0 "length: 512" -- pp --ctx-size 512
check "-t sets the cpu backend's threads" 0 "plugin: cpu, repack: true, threads: 3" -- pp -t 3
check "-t -1 is auto" 0 'plugin: cpu, repack: true, threads: "auto"' -- pp -t -1
check "-b and -ub set batch and ubatch" 0 "batch: 1024.*ubatch: 256" -- bash -c "'$exe' run -m '$m' --print-pipeline -b 1024 -ub 256 | tr '\n' ' '"
check "-np sets context.parallel" 0 "parallel: 4" -- pp -np 4
check "-ngl 99 is a layer count, not -n gl" 0 "gpu_layers: 99" -- pp -ngl 99
check "-ngl all" 0 "gpu_layers: all" -- pp -ngl all
check "--n-cpu-moe N" 0 "cpu_moe: 5" -- pp --n-cpu-moe 5
check "-ncmoe N" 0 "cpu_moe: 3" -- pp -ncmoe 3
check "--cpu-moe is every layer" 0 "cpu_moe: all" -- pp --cpu-moe
check "--cpu-moe with --n-cpu-moe is refused" 1 "give --cpu-moe .* or --n-cpu-moe N, not both" -- pp --cpu-moe --n-cpu-moe 2
check "-ot takes llama.cpp's comma list and buffer names" 0 'overrides: \["exps=cpu", "blk\\\\.1\\\\.=vulkan0"\]' -- \
  pp -dev vulkan0 -ot 'exps=CPU,blk\.1\.=Vulkan0'
check "-ot keeps a comma inside {n,m}" 0 'overrides: \["blk\\\\.\[0-9\]\{1,2\}\\\\.ffn=cpu"\]' -- pp -ot 'blk\.[0-9]{1,2}\.ffn=CPU'
check "-fa alone is on" 0 "flash_attention: true" -- pp -fa
check "-fa off" 0 "flash_attention: false" -- pp -fa off
check "-fa auto" 0 "flash_attention: auto" -- pp -fa auto
check "-ctk sets the KV type" 0 "kv_type: q8_0" -- pp -ctk q8_0
check "-ctk and -ctv must agree" 1 "^--cache-type-v f16: the V cache is kept in the K cache's type, q8_0 here; give --cache-type-k f16 \(-ctk\) to store both as f16" -- pp -ctk q8_0 -ctv f16
check "-ctv alone must equal the K type in effect" 1 "the V cache is kept in the K cache's type, f16 here" -- pp -ctv q8_0
check "-ctv equal to -ctk" 0 "kv_type: q8_0" -- pp -ctk q8_0 -ctv q8_0
check "-s -2 is refused, naming -1" 2 "--seed: must be an integer from 0 to 9223372036854775807, got '-2' \(or -1 for a random seed\)" -- pp -s -2
check "-dev with an index past 255" 1 "--device: 'cuda99999999999999999999' has no device index from 0 to 255" -- pp -dev cuda99999999999999999999
check "--no-mmap" 0 "mmap: false" -- pp --no-mmap
check "--mlock" 0 "mlock: true" -- pp --mlock
check "-dev none keeps the CPU only" 0 "^backends:\s+- \{plugin: cpu, repack: true, threads: \"auto\"\}\s+placement" -- \
  bash -c "'$exe' run -m '$m' --print-pipeline -dev none | tr '\n' ' ' | grep -o 'backends:.*placement'"
check "-dev vulkan0 puts the GPU first" 0 "plugin: vulkan, devices: \[0\].*plugin: cpu" -- \
  bash -c "'$exe' run -m '$m' --print-pipeline -dev vulkan0 | tr '\n' ' '"
check "-dev needs an index" 1 "--device takes GPU devices with their index" -- pp -dev vulkan

# Sampler flags tune the default chain (top_k 40, top_p 0.95, min_p 0.05, temperature 0.8, dist).
check "--temp changes the default chain's temperature" 0 \
  "top_k: \{k: 40\}.*top_p: \{min_keep: 1, p: 0.95\}.*min_p: \{min_keep: 1, p: 0.05\}.*temperature: \{t: 0.2\}.*dist" -- \
  bash -c "'$exe' run -m '$m' --print-pipeline --temp 0.2 | tr '\n' ' '"
check "--top-k, --top-p, --min-p" 0 "top_k: \{k: 5\}.*p: 0.5\}.*min_p: \{min_keep: 1, p: 0.1\}" -- \
  bash -c "'$exe' run -m '$m' --print-pipeline --top-k 5 --top-p 0.5 --min-p 0.1 | tr '\n' ' '"
check "--repeat-penalty adds a penalty at the chain's start" 0 "sampling:\s+- \{repetition_penalty: \{last_n: 64, penalty: 1.1\}\}\s+- \{top_k" -- \
  bash -c "'$exe' run -m '$m' --print-pipeline --repeat-penalty 1.1 | tr '\n' ' '"
check "--presence-penalty and --frequency-penalty" 0 "presence_penalty: \{last_n: 64, penalty: 0.5\}.*frequency_penalty: \{last_n: 64, penalty: 0.25\}.*top_k" -- \
  bash -c "'$exe' run -m '$m' --print-pipeline --presence-penalty 0.5 --frequency-penalty 0.25 | tr '\n' ' '"
check "--repeat-last-n sets the penalties' window" 0 "repetition_penalty: \{last_n: 128, penalty: 1.2\}" -- \
  bash -c "'$exe' run -m '$m' --print-pipeline --repeat-penalty 1.2 --repeat-last-n 128 | tr '\n' ' '"
check "-s seeds dist" 0 "dist: \{seed: 5\}" -- pp -s 5
check "-s -1 is a random seed, printed" 0 "^seed: [0-9]+ \(random\)" -- bash -c "'$exe' run -m '$m' --print-pipeline -s -1 2>&1 >/dev/null"
check "a flag's value is checked with the flag named" 1 "^--temp 500: 'sampling\[3\].temperature' must be between 0 and 100, got 500" -- pp --temp 500

cat > "$tmp/greedy.yaml" << EOF2
model: $m
sampling: [ greedy ]
EOF2
check "a sampler flag on a chain without that sampler inserts it before the terminal one" 0 \
  "sampling:\s+- \{temperature: \{t: 0.3\}\}\s+- \{greedy: \{\}\}" -- bash -c "'$exe' run -P '$tmp/greedy.yaml' --print-pipeline --temp 0.3 | tr '\n' ' '"
check "flags apply after --set" 0 "length: 200" -- pp --set context.length=100 -c 200

# --set reaches into shorthand forms; items can be addressed by name.
cat > "$tmp/base.yaml" << EOF2
model: $m
backends: [cpu]
sampling: [ { top_p: 0.9 }, dist ]
EOF2
check "--set into model: FILE, - cpu, { top_p: 0.9 } and - dist" 0 \
  "mmap: false.*plugin: cpu, repack: true, threads: 3.*top_p: \{min_keep: 2, p: 0.9\}.*dist: \{seed: 4\}" -- \
  bash -c "'$exe' run -P '$tmp/base.yaml' --print-pipeline --set model.mmap=false --set backends.0.threads=3 --set sampling.0.top_p.min_keep=2 --set sampling.dist.seed=4 | tr '\n' ' '"
check "--set addresses a backend by name" 0 "plugin: cpu, repack: true, threads: 2" -- \
  "$exe" run -P "$tmp/base.yaml" --print-pipeline --set backends.cpu.threads=2
check "--set by name names the items when none matches" 1 "'sampling.top_k': no item of the list is named 'top_k' \(it holds: top_p, dist\)" -- \
  "$exe" run -P "$tmp/base.yaml" --print-pipeline --set sampling.top_k.k=3
cat > "$tmp/bare.yaml" << EOF2
model: $m
sampling: [ top_p, dist ]
EOF2
check "--set sampling.NAME=VALUE on a bare sampler name gives it that main value" 0 "top_p: \{min_keep: 1, p: 0.5\}" -- \
  "$exe" run -P "$tmp/bare.yaml" --print-pipeline --set sampling.top_p=0.5
check "--set by name reaches the default chain and the default backends" 0 "plugin: cpu, repack: true, threads: 2.*temperature: \{t: 0.3\}" -- \
  bash -c "'$exe' run -m '$m' --print-pipeline --set sampling.temperature.t=0.3 --set backends.cpu.threads=2 | tr '\n' ' '"
check "validate --set into a sampler shorthand, as run does" 0 "ok" -- "$exe" validate "$tmp/base.yaml" --set sampling.0.top_p.min_keep=2
printf 'model: models/not-downloaded.gguf\n' > "$tmp/later.yaml"
check "validate -m replaces a model that is not downloaded yet" 0 "later.yaml: ok with" -- "$exe" validate "$tmp/later.yaml" -m "$m"
check "--print-pipeline writes absolute paths" 0 "path: \"$m\"" -- bash -c "cd '$tmp' && '$exe' run -m demo.gguf --print-pipeline"
check "a llama.cpp short flag as a value stays the value" 0 '"prompt_ids":\[1,[0-9]+' -- "$exe" run -m "$m" -p -sys -n 1 --json
check "a value that looks like a flag is not reported as a misspelt flag" 2 "--n-predict: must be an integer" -- "$exe" run -m "$m" -n abc -p -temp
printf 'x' > "$tmp/t.jinja"
cat > "$tmp/child.yaml" << EOF2
extends: base.yaml
model: { chat_template: t.jinja }
EOF2
check "extends merges a child's model mapping into a base's model path" 0 "path: \"$m\"\s+chat_template: \"$tmp/t.jinja\"" -- \
  bash -c "cd / && '$exe' run -P '$tmp/child.yaml' --print-pipeline | tr '\n' ' '"

# The pipeline file is -P now; -p is the prompt.
check "-p FILE.yaml says did you mean -P" 1 "-p is the prompt, as in llama.cpp; the pipeline file is -P .*base.yaml \(did you mean -P\?\)" -- \
  "$exe" run -p "$tmp/base.yaml"
check "chat -p FILE.yaml says did you mean -P too" 1 "did you mean -P\?" -- "$exe" chat -p "$tmp/base.yaml"
check "-p TEXT is the prompt" 0 '"prompt_ids":\[1,' -- "$exe" run -m "$m" -p "Hello" -n 2 --json
check "-f FILE is the prompt file" 0 '"prompt_ids":\[1,' -- bash -c "printf 'Hello' > '$tmp/p.txt' && '$exe' run -m '$m' -f '$tmp/p.txt' -n 2 --json"
check "-sys wraps the prompt in the chat template with a system message" 0 '"prompt_ids":\[' -- \
  "$exe" run -m "$m" -sys "Be brief." -p "Hello" -n 2 --json
check "chat -p sends the first message" 0 "." -- bash -c "'$exe' chat -m '$m' -p Hello -n 4 -s 1 < /dev/null"
# With `devices: all` only the started backend knows its devices: run checks the override.
if grep -q '^  vulkan0:' <<< "$("$exe" run --list-devices)"; then
  printf 'model: %s\nbackends: [ vulkan, cpu ]\nplacement: { overrides: ["blk=vulkan9"] }\n' "$m" > "$tmp/v9.yaml"
  check "an override naming a device the machine lacks is refused at start, at its position" 1 \
    "v9.yaml:3:26: device 'vulkan9' does not exist on this machine; the pipeline's backends have gpu0 \(vulkan0\), cpu" -- \
    "$exe" run -P "$tmp/v9.yaml" --prompt-ids 1 -n 1
else
  echo "skip [override device check at start: no Vulkan device here]"
fi
check "--list-devices lists the cpu" 0 "^  cpu: " -- "$exe" run --list-devices

# Ctrl-C: the run stops, prints what it generated and its timings, and exits 130. The
# signal is sent once the logits file shows generation has started.
"$exe" run -m "$m" --prompt-ids 1,2,3 -n -1 -c 1000000 --ignore-eos --json --logits-out "$tmp/l.jsonl" > "$tmp/int.json" 2> "$tmp/int.err" &
pid=$!
for _ in $(seq 1 600); do [ -s "$tmp/l.jsonl" ] && [ "$(wc -l < "$tmp/l.jsonl")" -ge 3 ] && break; sleep 0.1; done
kill -INT "$pid"
wait "$pid"
rc=$?
if [ "$rc" = 130 ] && grep -q '"stop_reason":"interrupted"' "$tmp/int.json" && grep -q '"generated_tokens":[1-9]' "$tmp/int.json"; then
  echo "ok   [Ctrl-C prints the JSON with what was generated and exits 130]"
else
  echo "FAIL [Ctrl-C]: exit $rc"; cat "$tmp/int.json" "$tmp/int.err" | head -5; failures=$((failures + 1))
fi

if [ "$failures" -gt 0 ]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "all llama flag checks passed"
