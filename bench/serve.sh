#!/usr/bin/env bash
# Serving benchmark, not a test: `switchyard serve` and the peer llama-server
# (../shared/tools/peer-llama-cpp) on the same GGUF, the same slots and per-sequence
# context, each measured by bench/serve.mjs in turn (never at the same time).
#   bench/serve.sh MODEL.gguf [SLOTS] [CTX] [THREADS] [-- serve.mjs options]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
model="$1"; slots="${2:-8}"; ctx="${3:-4096}"; threads="${4:-$(nproc)}"
shift $(( $# < 4 ? $# : 4 ))
[ "${1:-}" = "--" ] && shift
exe="${SWITCHYARD:-$root/build/bin/switchyard}"
peer="$("$root/../shared/tools/peer-llama-cpp")"
wait_up() { for _ in $(seq 600); do curl -sf "$1/health" > /dev/null && return 0; sleep 0.2; done; echo "server at $1 did not come up" >&2; return 1; }

"$exe" serve -m "$model" --port 18181 --slots "$slots" -c "$ctx" -t "$threads" > /tmp/bench-switchyard.log 2>&1 &
sy=$!
trap 'kill $sy ${ll:-} 2> /dev/null' EXIT
wait_up http://127.0.0.1:18181
echo "== switchyard serve (slots $slots, context $ctx per sequence, $threads threads)"
node "$root/bench/serve.mjs" http://127.0.0.1:18181 "$@"
kill $sy; wait $sy 2> /dev/null || true

# llama-server splits -c among its slots: give it slots x ctx, so each slot holds ctx.
"$peer/llama-server" -m "$model" --port 18182 -np "$slots" -c $((slots * ctx)) -t "$threads" --no-webui > /tmp/bench-llama.log 2>&1 &
ll=$!
wait_up http://127.0.0.1:18182
echo "== llama-server (-np $slots, -c $((slots * ctx)), $threads threads)"
node "$root/bench/serve.mjs" http://127.0.0.1:18182 "$@"
