#!/usr/bin/env bash
# Benchmark, not a test: `switchyard run --json` against `switchyard bench` on the same file
# and settings, in alternating fresh processes, and the ratio of their medians for prompt and
# generation tokens/s. `bench` (its default serving path) must report what `run` delivers;
# issue 37 asks for the two within 3%. The prompt is the same length for both, ids spread
# over the vocabulary; `run` generates with the pipeline's sampler (as a user does), `bench`
# feeds a fresh id per step (as llama-bench does): the per-step work is the same.
#   bench/run-vs-bench.sh MODEL.gguf [PROMPT=512] [GEN=64] [THREADS=nproc] [PAIRS=3] [-- extra flags for both]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
model="$1"; prompt="${2:-512}"; gen="${3:-64}"; threads="${4:-$(nproc)}"; pairs="${5:-3}"
shift $(( $# < 5 ? $# : 5 ))
[ "${1:-}" = "--" ] && shift
exe="${SWITCHYARD:-$root/build/bin/switchyard}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

vocab=$("$exe" inspect "$model" --json | python3 -c 'import json, sys; print(json.load(sys.stdin)["tokenizer"]["tokens"])')
ids=$(python3 -c "import sys; v, n = int(sys.argv[1]), int(sys.argv[2]); print(','.join(str(3 + (i * 7919) % (v - 3)) for i in range(n)))" "$vocab" "$prompt")

for i in $(seq "$pairs"); do
  echo "pair $i of $pairs" >&2
  "$exe" run -m "$model" --prompt-ids "$ids" -n "$gen" --ignore-eos -t "$threads" --json "$@" > "$tmp/run.$i.json"
  "$exe" bench -m "$model" -p "$prompt" -n "$gen" -t "$threads" -r 1 --bandwidth-mib 0 --json "$@" > "$tmp/bench.$i.json"
done

python3 - "$tmp" "$pairs" <<'PY'
import json, statistics, sys
tmp, pairs = sys.argv[1], int(sys.argv[2])
run_pp, run_tg, b_pp, b_tg = [], [], [], []
for i in range(1, pairs + 1):
    t = json.load(open(f"{tmp}/run.{i}.json"))["timings"]
    run_pp.append(t["prompt_tokens_per_s"]); run_tg.append(t["tokens_per_s"])
    row = json.load(open(f"{tmp}/bench.{i}.json"))["rows"][0]
    b_pp.append(row["pp_ts"]["mean"]); b_tg.append(row["tg_ts"]["mean"])
med = statistics.median
print("| test | run t/s (median, min-max) | bench t/s (median, min-max) | run / bench |")
print("|---|---|---|---:|")
for name, r, b in (("prompt", run_pp, b_pp), ("generation", run_tg, b_tg)):
    print(f"| {name} | {med(r):.2f} ({min(r):.2f}-{max(r):.2f}) | {med(b):.2f} ({min(b):.2f}-{max(b):.2f}) | {med(r) / med(b):.3f} |")
PY
