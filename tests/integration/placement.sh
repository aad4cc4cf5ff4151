#!/usr/bin/env bash
# Placement applied (issue 16): the bytes `run` places per device and component equal what
# `plan` computes for the same pipeline; routed experts on the CPU with the rest on a GPU
# move only activations; a placement that does not fit names the figures; a pipeline whose
# GPU backend cannot start continues on the CPU with a warning (an error under strict).
# The GPU is Vulkan: lavapipe here and in CI.
set -uo pipefail
exe="$1"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "${BASH_SOURCE[0]}")/check.sh"

# Read the whole listing before matching: `grep -q` quits at the first match, and under
# pipefail the listing's later writes then fail with SIGPIPE when it is over one pipe buffer.
devices="$("$exe" plugins --devices 2>&1)"
if ! grep -q "vulkan0" <<< "$devices"; then
  echo "$devices"
  if [ "${CI:-}" = "true" ]; then echo "FAIL: no Vulkan device (CI installs mesa-vulkan-drivers)"; exit 1; fi
  echo "SKIPPED: no Vulkan device on this machine (install mesa-vulkan-drivers for lavapipe)"; exit 77
fi

check "plugins --devices: vulkan0 with its memory, read rules, features and paths" 0 "^ok" -- bash -c "'$exe' plugins --devices --json | python3 -c '
import json, sys
j = json.load(sys.stdin)
vk = [b for b in j[\"devices\"] if b[\"backend\"] == \"vulkan\"][0]
d = vk[\"devices\"][0]
assert vk[\"available\"] and d[\"name\"] == \"vulkan0\" and d[\"total_memory\"] > 0, d
assert d[\"reads_host_memory\"] is False, d
assert any(f.startswith(\"vulkan 1.\") for f in d[\"features\"]), d
cpu = [b for b in j[\"devices\"] if b[\"backend\"] == \"cpu\"][0][\"devices\"][0]
assert cpu[\"reads_host_memory\"] is True, cpu
print(\"ok\")
'"
check "plugins --devices --json with SWITCHYARD_VULKAN_PATH=portable lists no fast path" 0 "^ok" -- bash -c "SWITCHYARD_VULKAN_PATH=portable '$exe' plugins --devices --json | python3 -c '
import json, sys
j = json.load(sys.stdin)
d = [b for b in j[\"devices\"] if b[\"backend\"] == \"vulkan\"][0][\"devices\"][0]
assert not [f for f in d[\"features\"] if f.startswith(\"path \")], d[\"features\"]
print(\"ok\")
'"

m="$tmp/demo.gguf"
"$exe" synth -o "$m" > /dev/null || { echo "FAIL: synth"; exit 1; }

# run --json's devices[] against plan --json's devices[], matched by name.
compare() {
  python3 - "$1" "$2" <<'PY'
import json, sys
run = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
plan = json.load(open(sys.argv[2]))
r = {d["name"]: d for d in run["devices"]}
p = {d["name"]: d for d in plan["devices"]}
assert set(r) == set(p), (sorted(r), sorted(p))
for name in r:
    for k in ["weights", "expert_weights", "kv", "recurrent"]:
        assert r[name][k] == p[name][k], f"{name}.{k}: run placed {r[name][k]}, plan says {p[name][k]}"
print("equal:", {n: (r[n]["weights"], r[n]["kv"]) for n in r})
PY
}

pipeline() {  # pipeline FILE PLACEMENT
  printf 'model: %s\nbackends: [vulkan, cpu]\ncontext: { length: 256 }\nplacement: %s\n' "$m" "$2" > "$1"
}

for placement in "{ gpu_layers: all }" "{ gpu_layers: all, cpu_moe: all }" "{ gpu_layers: all, cpu_moe: 1 }" \
                 "{ gpu_layers: 2 }" "{ gpu_layers: all, overrides: [\"ffn_.*_exps=cpu\", \"blk\\\\.0\\\\.=gpu0\"] }"; do
  p="$tmp/p.yaml"
  pipeline "$p" "$placement"
  "$exe" run -P "$p" --prompt-ids 1,2,3,4,5 -n 3 --temp 0 --json > "$tmp/run.json" 2> "$tmp/run.err"
  "$exe" plan -P "$p" --json > "$tmp/plan.json" 2> "$tmp/plan.err"
  check "run places what plan plans: $placement" 0 "^equal:" -- compare "$tmp/run.json" "$tmp/plan.json"
done

# Routed experts in RAM, the rest on the GPU: no weight crosses per token, only activations
# (a few vectors of the model's width per layer; the demo model's is 256 floats).
pipeline "$tmp/h.yaml" "{ gpu_layers: all, cpu_moe: all }"
"$exe" run -P "$tmp/h.yaml" --prompt-ids 1,2,3,4,5 -n 3 --temp 0 --json > "$tmp/h.json" 2> /dev/null
check "hybrid: a decoded token moves activations only" 0 "^moved" -- python3 - "$tmp/h.json" <<'PY'
import json, sys
j = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
moved = j["stats"]["last_step_transfer_bytes"]
experts = sum(d["expert_weights"] for d in j["devices"])
gpu = [d for d in j["devices"] if d["name"] == "gpu0"][0]
cpu = [d for d in j["devices"] if d["name"] == "cpu"][0]
assert gpu["expert_weights"] == 0 and cpu["expert_weights"] == experts > 0, j["devices"]
assert gpu["kv"] > 0 and gpu["recurrent"] > 0 and cpu["kv"] == 0, j["devices"]
assert j["stats"]["fallback_nodes"] == 0, j["stats"]
# 4 layers, each sending its normed input to the CPU and the expert mix back, plus the
# router's choice: well under 64 vectors of 256 floats. The smallest expert is larger.
assert 0 < moved <= 4 * 16 * 256 * 4, moved
print("moved", moved, "bytes per decoded token")
PY

# Does not fit: the plan's figures and what would.
pipeline "$tmp/big.yaml" "{ gpu_layers: all, min_headroom: 1000TiB }"
check "a placement that does not fit names the figures" 1 "does not fit this machine.*gpu0 \(vulkan0\): needs [0-9]+ MiB, 0 MiB usable" -- \
  bash -c "'$exe' run -P '$tmp/big.yaml' --prompt-ids 1,2 -n 1 2>&1 | tr '\n' ' '; exit \${PIPESTATUS[0]}"

# Portable and backend names for the same device; an index that is not there.
pipeline "$tmp/o.yaml" "{ gpu_layers: 0, overrides: [\"blk\\\\.1\\\\.ffn=vulkan0\"] }"
check "vulkan0 in an override is gpu0" 0 '"name":"gpu0","device":"vulkan0","weights":[1-9]' -- \
  "$exe" run -P "$tmp/o.yaml" --prompt-ids 1,2 -n 1 --json
pipeline "$tmp/o2.yaml" "{ overrides: [\"blk=gpu3\"] }"
check "gpu3 on a one-GPU machine" 1 "device 'gpu3' does not exist on this machine; the pipeline's backends have gpu0 \(vulkan0\), cpu" -- \
  "$exe" run -P "$tmp/o2.yaml" --prompt-ids 1,2 -n 1

# No Vulkan driver: a warning, then the CPU; under strict, an error naming the backend.
pipeline "$tmp/nd.yaml" "{ gpu_layers: all }"
check "no Vulkan driver: the cpu carries on" 0 "backend vulkan skipped: vulkan: .*" -- \
  env VK_ICD_FILENAMES=/nonexistent.json VK_DRIVER_FILES=/nonexistent.json "$exe" run -P "$tmp/nd.yaml" --prompt-ids 1,2 -n 1
printf 'strict: true\n' >> "$tmp/nd.yaml"
check "no Vulkan driver under strict: refused" 1 "backend vulkan: vulkan: " -- \
  env VK_ICD_FILENAMES=/nonexistent.json VK_DRIVER_FILES=/nonexistent.json "$exe" run -P "$tmp/nd.yaml" --prompt-ids 1,2 -n 1

[ "$failures" -eq 0 ] || { echo "$failures failed"; exit 1; }
echo "all passed"
