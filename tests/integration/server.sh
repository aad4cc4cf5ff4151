#!/usr/bin/env bash
# `switchyard serve` driven by real clients: the official `openai` npm package (plain,
# streaming, stop strings, logprobs, errors, tool calls, reasoning, a bounded load test),
# curl for the HTTP edges (health, metrics, keys, body limit, CORS), and the chat page in
# headless Chromium. The model: the demo topology with the real Qwen3 tokenizer and chat
# template (shared data); skipped without it (exit 77) unless CI=true.
set -uo pipefail
exe="$1"
src="$2"
shared="$3"
script_dir="$4"  # the test-only `script` sampler
tmp="$(mktemp -d)"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2> /dev/null; done
  wait 2> /dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
. "$(dirname "${BASH_SOURCE[0]}")/check.sh"

tok="$shared/tokenizers/qwen3/tokenizer.json"
if [ ! -f "$tok" ] || ! command -v node > /dev/null || [ ! -d "$src/tests/node/node_modules/openai" ]; then
  [ "${CI:-}" = true ] && { echo "FAIL: the server tests need $tok, node and tests/node/node_modules (scripts/setup)"; exit 1; }
  echo "SKIPPED: the server tests need $tok, node and the npm packages (scripts/setup)"
  exit 77
fi
node_test="$src/tests/integration/openai_client.mjs"
m="$tmp/q.gguf"
"$exe" synth --tokenizer "$tok" --vocab 151669 -o "$m" > /dev/null || { echo "FAIL: synth"; exit 1; }

# start NAME ARGS...: runs serve on a free port, waits for /health, sets $url and $pid.
start() {
  local name="$1"
  shift
  # Under AddressSanitizer (scripts/test --sanitize) freed memory waits in a quarantine of
  # 256 MiB by default, which would read as growth in the RSS check: keep it small.
  ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=4" "$exe" serve --port 0 "$@" > "$tmp/$name.log" 2>&1 &
  pid=$!
  pids+=("$pid")
  url=""
  for _ in $(seq 600); do
    [ -z "$url" ] && url="$(grep -oE 'http://127\.0\.0\.1:[0-9]+' "$tmp/$name.log" | head -1)"
    if [ -n "$url" ] && [ "$(curl -s -o /dev/null -w '%{http_code}' "$url/health")" = 200 ]; then return 0; fi
    kill -0 "$pid" 2> /dev/null || break
    sleep 0.1
  done
  echo "FAIL [$name: the server did not come up]"; cat "$tmp/$name.log"; failures=$((failures + 1))
  return 1
}
stop() {
  kill -TERM "$1" 2> /dev/null
  wait "$1"
}

cat > "$tmp/p.yaml" << EOF2
model: { path: "$m" }
context: { length: 1024, batch: 256, ubatch: 256 }
server: { slots: 8, max_tokens: 512, cors_origins: ["http://allowed.example"] }
EOF2
printf '# test keys\nsk-one\n\nsk-two\n' > "$tmp/keys"
if start main -P "$tmp/p.yaml" --api-key-file "$tmp/keys"; then
  SWITCHYARD_API_KEY=sk-two node "$node_test" api "$url" q
  failures=$((failures + $?))
  code() { curl -s -o "$tmp/body" -w '%{http_code}' "$@"; }
  check "health needs no key" 0 '^200$' -- code "$url/health"
  check "no key: 401" 0 '^401$' -- code "$url/v1/models"
  check "a key from the file" 0 '^200$' -- code -H 'Authorization: Bearer sk-one' "$url/v1/models"
  check "the page at / (no key)" 0 '^200$' -- code "$url/"
  check "unknown URL: 404" 0 '^404$' -- code -H 'Authorization: Bearer sk-one' "$url/v2/nothing"
  check "metrics in Prometheus text" 0 'switchyard_requests_total\{status="200"\} [0-9]+' -- \
    curl -s -H 'Authorization: Bearer sk-one' "$url/metrics"
  check "metrics: time to first token, KV blocks, prefix cache, slots" 0 \
    'switchyard_time_to_first_token_seconds_count [1-9].*' -- \
    bash -c "curl -s -H 'Authorization: Bearer sk-one' '$url/metrics' | tr '\n' ' ' | grep -E 'switchyard_kv_blocks_total [1-9]' | grep -E 'switchyard_prefix_cache_hit_tokens_total' | grep -E 'switchyard_slots_total 8'"
  head -c 9000000 /dev/zero | tr '\0' 'a' > "$tmp/big"
  check "a body over the limit: 413" 0 '^413$' -- code -H 'Authorization: Bearer sk-one' --data-binary @"$tmp/big" "$url/v1/completions"
  check "CORS: an allowed origin gets the header" 0 '[Aa]ccess-[Cc]ontrol-[Aa]llow-[Oo]rigin: http://allowed.example' -- \
    curl -s -i -X OPTIONS -H 'Origin: http://allowed.example' "$url/v1/chat/completions"
  check "CORS: another origin gets none" 0 '^405$' -- code -X OPTIONS -H 'Origin: http://evil.example' "$url/v1/chat/completions"
  if [ -x /usr/bin/chromium ] && [ -d "$src/tests/node/node_modules/playwright-core" ]; then
    SWITCHYARD_API_KEY=sk-one node "$src/tests/integration/chat_page.mjs" "$url" "$tmp/shots"
    failures=$((failures + $?))
  elif [ "${CI:-}" = true ]; then
    echo "FAIL [chat page: chromium or playwright-core missing (scripts/setup)]"; failures=$((failures + 1))
  fi
  SWITCHYARD_API_KEY=sk-one node "$node_test" load "$url" q 1000 32 "$pid"
  failures=$((failures + $?))
  stop "$pid"
  check "SIGTERM stops it cleanly" 0 "stopping \(SIGTERM\)" -- cat "$tmp/main.log"
fi

cat > "$tmp/small.yaml" << EOF2
model: { path: "$m" }
context: { length: 4096 }
server: { slots: 1, max_queue: 1, request_timeout: 2 }
EOF2
if start small -P "$tmp/small.yaml"; then
  node "$node_test" limits "$url" q
  failures=$((failures + $?))
  stop "$pid"
fi

# A scripted model answer (the test's `script` sampler) for tool calls and reasoning.
scripted() {  # scripted NAME TEXT: a pipeline whose sampler says TEXT, then <|im_end|>
  local ids
  ids="$("$exe" tokenize -m "$m" --parse-special --text "$2<|im_end|>" --json | python3 -c 'import json,sys; print(",".join(map(str, json.load(sys.stdin)["ids"])))')"
  cat > "$tmp/$1.yaml" << EOF2
plugin_path: ["$script_dir"]
model: { path: "$m" }
context: { length: 1024 }
sampling: [ { script: { ids: [$ids] } } ]
EOF2
}
scripted tools $'<tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>'
if start tools -P "$tmp/tools.yaml"; then
  node "$node_test" tools "$url" q
  failures=$((failures + $?))
  stop "$pid"
fi
scripted think $'<think>\nI should answer.\n</think>\n\nHello!'
if start think -P "$tmp/think.yaml"; then
  node "$node_test" reasoning "$url" q
  failures=$((failures + $?))
  stop "$pid"
fi

check "a port in use is refused, naming it" 1 "cannot listen on 127.0.0.1:[0-9]+: .*--port" -- \
  bash -c "python3 -c 'import socket,time; s=socket.socket(); s.bind((\"127.0.0.1\",0)); s.listen(); print(s.getsockname()[1], flush=True); time.sleep(30)' > '$tmp/port' & for i in \$(seq 1 100); do [ -s '$tmp/port' ] && break; sleep 0.1; done; '$exe' serve -m '$m' --port \$(cat '$tmp/port')"
[ "$failures" -eq 0 ] || { echo "$failures failure(s)"; exit 1; }
