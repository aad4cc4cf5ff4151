#!/usr/bin/env bash
# `switchyard eval` as a user drives it: the shipped examples (configs/eval/, shortened with
# --max-prompts / --max-tokens), a gate that holds and one that fails (exit 3 with the
# crossed limit named), the report and plot files, --json, and bad input.
#   eval.sh SWITCHYARD SOURCE_DIR SHARED_DIR
set -uo pipefail
exe="$1"
src="$2"
shared="$3"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "${BASH_SOURCE[0]}")/check.sh"

require_shared "$shared" models

# An eval of our own against the given shared folder: stories260K as the reference, the same
# pipeline again (which must agree in everything), and a fixture with the same vocabulary
# but random weights (which must not).
cat > "$tmp/stories.yaml" <<YAML
model: { path: $shared/models/stories260K.gguf }
backends: [ { plugin: cpu, threads: 2 } ]
context: { length: 256, batch: 256, ubatch: 64 }
sampling: [ greedy ]
YAML
cat > "$tmp/prompts.jsonl" <<'JSONL'
{"id": "once", "prompt": "Once upon a time"}
{"id": "lily", "prompt": "Lily wanted to play with her ball, but"}
{"id": "dog", "prompt": "The little dog was very happy because"}
JSONL
cat > "$tmp/gate.yaml" <<YAML
prompts: prompts.jsonl
max_tokens: 24
runs: 2
sampling: [ { temperature: 0.8 }, dist ]
reference: base
pipelines:
  base: stories.yaml
  again: stories.yaml
  f32-kv: { pipeline: stories.yaml, set: [ context.kv_type=f32 ] }
thresholds:
  again: { min_top1: 1, max_mean_kld: 0.0001, min_exact_match: 1, min_seeded_agreement: 1 }
  f32-kv: { min_top1: 0.95, max_mean_kld: 0.001 }
YAML
check "a gate that holds: exit 0" 0 'eval: pass' -- "$exe" eval "$tmp/gate.yaml" --report "$tmp/gate.md"
check "the report's table" 0 '\| again \| 1\.000 \|' -- cat "$tmp/gate.md"
check "the plot is SVG with a line per pipeline" 0 '^ok$' -- python3 -c "
import xml.etree.ElementTree as ET
t = ET.parse('$tmp/gate.svg').getroot()
text = ' '.join(e.text or '' for e in t.iter())
print('ok' if t.tag.endswith('svg') and 'again' in text and 'f32-kv' in text else text)"
check "--json: the same pipeline agrees in everything" 0 '^ok$' -- bash -c "'$exe' eval '$tmp/gate.yaml' --report '$tmp/j.md' --json -q 2>/dev/null | python3 -c '
import json, sys
j = json.load(sys.stdin)
p = {x[\"name\"]: x for x in j[\"pipelines\"]}
a = p[\"again\"]
ok = j[\"pass\"] and a[\"top1\"] == 1 and a[\"exact_match\"] == 1 and a[\"seeded_agreement\"] == 1 and abs(a[\"kld\"][\"mean\"]) < 1e-4
ok = ok and p[\"base\"][\"reference\"] and a[\"scored_tokens\"] > 0
print(\"ok\" if ok else j)'"

cat > "$tmp/random.yaml" <<YAML
model: { path: $shared/fixtures/llama-e256-q8_0.gguf }
backends: [ { plugin: cpu, threads: 2 } ]
context: { length: 256, batch: 256, ubatch: 64 }
sampling: [ greedy ]
YAML
cat > "$tmp/fail.yaml" <<YAML
prompts: prompts.jsonl
max_tokens: 8
runs: 0
reference: base
pipelines: { base: stories.yaml, random: random.yaml }
thresholds: { all: { min_top1: 0.9 } }
YAML
check "a gate that fails: exit 3, the limit named" 3 'FAIL random: top-1 agreement [0-9.]+ is below min_top1 0\.9' -- \
  "$exe" eval "$tmp/fail.yaml" --report "$tmp/fail.md"
check "the report says so" 0 'Result: FAIL' -- cat "$tmp/fail.md"

check "a missing prompt set" 1 "the prompt set '.*nothing\.jsonl' does not exist" -- bash -c "sed 's/prompts.jsonl/nothing.jsonl/' '$tmp/gate.yaml' > '$tmp/np.yaml'; '$exe' eval '$tmp/np.yaml'"
check "an unknown key" 1 'bad\.yaml:1: unknown key .promts.' -- bash -c "printf 'promts: p\n' > '$tmp/bad.yaml'; '$exe' eval '$tmp/bad.yaml'"
check "a bad prompt line" 1 'bad\.jsonl:2: each line must be one JSON object' -- bash -c "
  printf '{\"prompt\": \"a\"}\n{prompt}\n' > '$tmp/bad.jsonl'
  sed 's/prompts.jsonl/bad.jsonl/' '$tmp/gate.yaml' > '$tmp/bp.yaml'; '$exe' eval '$tmp/bp.yaml' --report '$tmp/bp.md'"
check "a pipeline that does not load" 1 "pipeline 'again'" -- bash -c "
  sed 's/  again: stories.yaml/  again: { pipeline: stories.yaml, set: [ context.kv_type=q9 ] }/' '$tmp/gate.yaml' > '$tmp/bk.yaml'
  '$exe' eval '$tmp/bk.yaml' --report '$tmp/bk.md'"
check "a prompt and max_tokens past the context" 1 "do not fit the context of 256 \\(context.length\\)" -- \
  "$exe" eval "$tmp/gate.yaml" --max-tokens 300 --report "$tmp/ctx.md"
check "a report in a missing folder, before any model loads" 1 '--report' -- "$exe" eval "$tmp/gate.yaml" --report "$tmp/no/r.md"

# The shipped examples name the shared folder beside the checkout.
if [ "$(realpath "$shared")" = "$(realpath "$src/../shared" 2>/dev/null)" ]; then
  check "configs/eval/kv-q8-vs-f16.yaml" 0 'eval: pass' -- \
    "$exe" eval "$src/configs/eval/kv-q8-vs-f16.yaml" --max-prompts 3 --max-tokens 16 --report "$tmp/kv.md"
  if grep -q vulkan0 <<< "$("$exe" plugins --devices 2>&1)"; then
    check "configs/eval/cpu-moe-placements.yaml (on Vulkan)" 0 'eval: pass' -- \
      "$exe" eval "$src/configs/eval/cpu-moe-placements.yaml" --max-prompts 1 --max-tokens 6 --runs 0 --report "$tmp/moe.md"
  else
    echo "note: no Vulkan device here; configs/eval/cpu-moe-placements.yaml not run"
  fi
else
  echo "note: the shipped configs/eval examples name ../shared beside the checkout; not run with another shared folder"
fi

[ "$failures" = 0 ] || { echo "$failures failure(s)"; exit 1; }
