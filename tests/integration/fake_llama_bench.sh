#!/usr/bin/env bash
# A stand-in for llama.cpp's llama-bench in tests of `bench --compare`: it checks that it is
# called as one repetition with JSON output, records its arguments (FAKE_PEER_LOG), and
# prints llama-bench -o json's shape with fixed figures, so the compare path runs in CI
# without llama.cpp.
set -euo pipefail
p=0 n=0 d=0 r="" o=""
[ -n "${FAKE_PEER_LOG:-}" ] && echo "$*" >> "$FAKE_PEER_LOG"
while [ $# -gt 0 ]; do
  case "$1" in
    -p) p="$2"; shift ;;
    -n) n="$2"; shift ;;
    -d) d="$2"; shift ;;
    -r) r="$2"; shift ;;
    -o) o="$2"; shift ;;
  esac
  shift
done
[ "$r" = 1 ] && [ "$o" = json ] || { echo "fake llama-bench: expected -r 1 -o json" >&2; exit 1; }
tests=()
common='"build_commit": "fake123", "build_number": 42, "cpu_info": "fake", "backends": "CPU", "model_type": "fake Q8_0", "model_size": 1, "model_n_params": 1'
# pp at 100 tokens/s, tg at 10: samples_ns is tokens / rate in ns.
[ "$p" -gt 0 ] && tests+=("{$common, \"n_prompt\": $p, \"n_gen\": 0, \"n_depth\": $d, \"avg_ts\": 100.0, \"samples_ns\": [$((p * 10000000))], \"samples_ts\": [100.0]}")
[ "$n" -gt 0 ] && tests+=("{$common, \"n_prompt\": 0, \"n_gen\": $n, \"n_depth\": $d, \"avg_ts\": 10.0, \"samples_ns\": [$((n * 100000000))], \"samples_ts\": [10.0]}")
( IFS=,; echo "[${tests[*]}]" )
