#!/usr/bin/env bash
# `switchyard bench` on the demo model: the JSON's rows and figures, the CSV header, the
# markdown table, errors for bad lists, and --compare against a fake llama-bench
# (fake_llama_bench.sh) that reports 100 prompt and 10 generation tokens/s.
set -uo pipefail
exe="$1"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
. "$here/check.sh"

m="$tmp/demo.gguf"
"$exe" synth -o "$m" > /dev/null 2>&1 || { echo "FAIL [synth]"; exit 1; }
small=(--bandwidth-mib 16)  # the default 1 GiB read is too slow for CI's two cores

"$exe" bench -m "$m" -p 16 -n 4 -t 1,2 -r 2 "${small[@]}" --json > "$tmp/b.json" 2> "$tmp/b.err"
check "bench --json: rows, figures and samples" 0 "^ok$" -- python3 - "$tmp/b.json" "$m" <<'PY'
import json, os, sys
j = json.load(open(sys.argv[1]))
size = os.path.getsize(sys.argv[2])
rows = j["rows"]
assert len(rows) == 2, len(rows)  # -t 1,2
assert [r["n_threads"] for r in rows] == [1, 2]
assert j["build"]["version"] and j["machine"]["cpu"]
assert all(b["bytes_per_s"] > 0 for b in j["machine"]["bandwidth"])
for r in rows:
    assert (r["n_prompt"], r["n_gen"], r["n_depth"], r["repetitions"]) == (16, 4, 0, 2), r
    assert len(r["samples"]) == 2 and len(r["pp_ts"]["samples"]) == 2 and len(r["tg_ts"]["samples"]) == 2
    for s in r["samples"]:
        assert s["load_ms"] > 0 and s["prompt_ms"] > 0 and s["gen_ms"] > 0 and s["peak_rss_bytes"] > 0
        assert s["ttft_ms"] >= s["prompt_ms"]
    # tokens/s are the tokens over the sample's time
    for s, ts in zip(r["samples"], r["pp_ts"]["samples"]):
        assert abs(ts - 16 * 1000 / s["prompt_ms"]) < 1e-6 * ts
    pp = r["pp_ts"]["samples"]
    assert abs(r["pp_ts"]["mean"] - sum(pp) / 2) < 1e-9 * r["pp_ts"]["mean"]
    assert r["peak_rss_bytes"] == max(s["peak_rss_bytes"] for s in r["samples"])
    assert r["file_bytes"] == size
    assert abs(r["rss_over_file"] - r["peak_rss_bytes"] / size) < 1e-9
    b = r["bytes_per_token"]
    assert b["total"] > 0 and b["experts"] > 0 and b["kv"] > 0 and b["state"] > 0
    assert r["bandwidth_share"] > 0
    assert abs(r["bandwidth_share"] - b["total"] * r["tg_ts"]["mean"] / r["bandwidth_bytes_per_s"]) < 1e-9
print("ok")
PY

# The default path is the scheduler `run` and `serve` use; a row with depth, and --path
# engine, time the engine's decode calls alone (docs/performance.md).
"$exe" bench -m "$m" -p 8 -n 2 -d 0,4 -r 1 --bandwidth-mib 0 --json > "$tmp/p.json" 2> "$tmp/p.err"
"$exe" bench -m "$m" -p 8 -n 2 -r 1 --bandwidth-mib 0 --path engine --json > "$tmp/e.json" 2> "$tmp/e.err"
check "bench --path: serve by default, engine for depth and when asked" 0 "^ok$" -- python3 - "$tmp/p.json" "$tmp/e.json" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
assert [(r["n_depth"], r["path"]) for r in rows] == [(0, "serve"), (4, "engine")], rows
eng = json.load(open(sys.argv[2]))["rows"]
assert [r["path"] for r in eng] == ["engine"], eng
for r in rows + eng:
    assert r["pp_ts"]["mean"] > 0 and r["tg_ts"]["mean"] > 0, r
print("ok")
PY
check "bench --path: an unknown path names the choices" 2 "no such path .fast. \(one of: serve, engine\)" -- \
  "$exe" bench -m "$m" -p 8 -n 2 -r 1 --path fast

check "bench --csv: header and one line per row" 0 "^ok$" -- bash -c \
  '"$1" bench -m "$2" -p 16 -n 0,4 -r 1 --bandwidth-mib 0 --csv 2>/dev/null | python3 -c "
import csv, sys
rows = list(csv.DictReader(sys.stdin))
assert len(rows) == 2, rows
assert [r[\"n_gen\"] for r in rows] == [\"0\", \"4\"]
assert float(rows[0][\"pp_ts\"]) > 0 and float(rows[0][\"tg_ts\"]) == 0 and float(rows[1][\"tg_ts\"]) > 0
print(\"ok\")"' _ "$exe" "$m"
# check_all NAME FILE REGEX...: every regex matches a line of FILE (grep -E reads a pattern
# with newlines as alternatives, so each line is its own pattern).
check_all() {
  local name="$1" file="$2" re
  shift 2
  for re in "$@"; do
    if ! grep -Eq -- "$re" "$file"; then
      echo "FAIL [$name]: no line matches /$re/"; head -20 "$file"; failures=$((failures + 1)); return
    fi
  done
  echo "ok   [$name]"
}

"$exe" bench -m "$m" -p 16 -n 4 -d 8 -r 1 --bandwidth-mib 0 > "$tmp/t.md" 2>&1
check_all "bench: llama-bench's markdown table, pp and tg lines" "$tmp/t.md" \
  "^\| model \| size \| params \| backend \| threads \| test \| t/s \| ttft ms \| load s \| peak RSS \| RSS / file \| GB / token \| of bandwidth \|$" \
  "^\| demo.gguf \| [0-9.]+ MiB \| [0-9.]+ M \| cpu \| auto \| pp16 @ d8 \| [0-9.]+ ± [0-9.]+ \| [0-9.]+ \|" \
  "^\| demo.gguf \| [0-9.]+ MiB \| [0-9.]+ M \| cpu \| auto \| tg4 @ d8 \| [0-9.]+ ± [0-9.]+ \| +\| [0-9.]+ \| .* \| [0-9.]+ \| +\|$"

check "bench: a bad -p item is named" 1 "^switchyard bench: -p 'x': expected integers from 0 to" -- "$exe" bench -m "$m" -p 16,x
check "bench: a negative depth is refused" 1 "^switchyard bench: -d '-1':" -- "$exe" bench -m "$m" -d -1
check "bench: -p 0 -n 0 measures nothing" 1 "measures nothing" -- "$exe" bench -m "$m" -p 0 -n 0
check "bench: -r 0 is refused" 2 "repetitions.*must be an integer from 1 to 1000" -- "$exe" bench -m "$m" -r 0
check "bench: a context too small for the row" 1 "-c 32 is too small for -p 64 -n 4 -d 0, which needs 65 positions" \
  -- "$exe" bench -m "$m" -p 64 -n 4 -c 32
check "bench --profile: a context too small for the profile is refused before measuring" 1 \
  "^switchyard bench: --profile: -c 64 is too small for -p 512" -- "$exe" bench -m "$m" -p 0 -n 4 -c 64 --profile -r 1
check "bench: a missing model file" 1 "nope.gguf" -- "$exe" bench -m "$tmp/nope.gguf" -r 1
check "bench --compare: a missing peer" 1 "--compare $tmp/nope: no such executable" \
  -- "$exe" bench -m "$m" -p 16 -n 4 --compare "$tmp/nope"

# --compare: ours then the peer's, per repetition; the peer's figures and the ratios.
export FAKE_PEER_LOG="$tmp/peer.log"
"$exe" bench -m "$m" -p 16 -n 4 -t 1 -r 3 -ctk q8_0 --bandwidth-mib 0 --compare "$here/fake_llama_bench.sh" --json \
  > "$tmp/c.json" 2> "$tmp/c.err"
check "bench --compare: both sides, the ratios, the peer once per repetition" 0 "^ok$" -- python3 - "$tmp/c.json" "$tmp/peer.log" "$m" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
calls = open(sys.argv[2]).read().splitlines()
assert len(calls) == 3, calls
assert all(c.startswith("-m " + sys.argv[3] + " -p 16 -n 4 -d 0 -r 1 -o json -t 1 -ngl 0") and "-ctk q8_0" in c for c in calls), calls
(r,) = j["rows"]
p = r["peer"]
assert p["build_commit"] == "fake123" and p["build_number"] == 42
assert p["pp_ts"]["samples"] == [100.0] * 3 and p["tg_ts"]["median"] == 10.0
assert all(x > 0 for x in p["peak_rss_samples"])
assert p["load_s_estimate"]["median"] >= 0
q = r["ratio_ours_over_peer"]
assert abs(q["pp_ts_median"] - r["pp_ts"]["median"] / 100.0) < 1e-9
assert abs(q["tg_ts_median"] - r["tg_ts"]["median"] / 10.0) < 1e-9
print("ok")
PY
"$exe" bench -m "$m" -p 16 -n 4 -r 1 --bandwidth-mib 0 --compare "$here/fake_llama_bench.sh" > "$tmp/c.md" 2>&1
check_all "bench --compare: markdown has our line, the peer's, the ratio and the peer's build" "$tmp/c.md" \
  "^\| demo.gguf \| auto \| tg4 \| switchyard \| [0-9.]+ ± [0-9.]+ \|" \
  "^\| demo.gguf \| auto \| tg4 \| llama.cpp \| 10.00 ± 0.00 \| 10.00 \| 10.00-10.00 \|" \
  "^\| demo.gguf \| auto \| tg4 \| ours / peer \| +\| [0-9.]+x \|" \
  "^\| demo.gguf \| auto \| pp16 \| llama.cpp \| 100.00 ± 0.00 \|" \
  "^peer: .*fake_llama_bench.sh, llama.cpp build fake123 \(42\)"

# --svg: generation speed against depth, a line per runtime with a point per depth.
"$exe" bench -m "$m" -p 0 -n 4 -d 0,8 -r 1 --bandwidth-mib 0 --compare "$here/fake_llama_bench.sh" --svg "$tmp/d.svg" \
  > /dev/null 2>&1
check "bench --svg: both runtimes, one point per depth" 0 "^ok$" -- python3 - "$tmp/d.svg" <<'PY'
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
ns = "{http://www.w3.org/2000/svg}"
lines = root.findall(ns + "polyline")
assert len(lines) == 2, len(lines)
assert all(len(l.get("points").split()) == 2 for l in lines)
texts = [t.text for t in root.iter(ns + "text")]
assert "switchyard (t=auto, tg4)" in texts and "llama.cpp (t=auto, tg4)" in texts, texts
print("ok")
PY
check "bench --svg: an unwritable path is refused before measuring" 1 "--svg" \
  -- "$exe" bench -m "$m" -p 16 -n 4 -r 1 --svg "$tmp/no/such/dir/d.svg"

[ "$failures" = 0 ] || { echo "$failures failure(s)"; exit 1; }
echo "all bench checks passed"
