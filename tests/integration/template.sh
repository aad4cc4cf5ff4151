#!/usr/bin/env bash
# `switchyard template` as a user drives it: exact output (no newline added), errors with
# line and column and exit 1; `run --chat` with a template file.
set -uo pipefail
exe="$1"
shared="$2"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "${BASH_SOURCE[0]}")/check.sh"

printf '{%%- for m in messages %%}<{{ m.role }}>{{ m.content }}\n{%% endfor %%}{{ "!" if add_generation_prompt }}' > "$tmp/t.jinja"
printf '{"messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}], "add_generation_prompt": true}' > "$tmp/c.json"
"$exe" template --template "$tmp/t.jinja" --context "$tmp/c.json" > "$tmp/out" 2>&1
if [ "$(od -c "$tmp/out" | head -3)" = "$(printf '<user>hi\n<assistant>yo\n!' | od -c | head -3)" ]; then
  echo "ok   [template prints exactly the rendered string]"
else
  echo "FAIL [template output]"; od -c "$tmp/out" | head; failures=$((failures + 1))
fi
printf 'line one\n{%% if x %%}\n{{ raise_exception("no system role") }}\n{%% endif %%}' > "$tmp/r.jinja"
printf '{"x": true}' > "$tmp/x.json"
check "raise_exception: message with line and column, exit 1" 1 "r.jinja:3:4: no system role" -- \
  "$exe" template --template "$tmp/r.jinja" --context "$tmp/x.json"
printf 'a {%% for x in y %%}' > "$tmp/bad.jinja"
check "syntax error with its position" 1 "bad.jinja:1:3: this \{% for %\} is never closed" -- "$exe" template --template "$tmp/bad.jinja"
printf '[1, 2' > "$tmp/bad.json"
check "malformed context JSON" 1 "bad.json is not valid JSON" -- "$exe" template --template "$tmp/t.jinja" --context "$tmp/bad.json"
check "missing template file" 1 "--template '.*none.jinja' does not exist" -- "$exe" template --template "$tmp/none.jinja"
printf '{{ strftime_now("%%d %%b %%Y") }}' > "$tmp/d.jinja"
check "strftime_now with a fixed clock" 0 "^26 Jul 2024$" -- "$exe" template --template "$tmp/d.jinja" --now 2024-07-26T00:00:00

if [ -f "$shared/models/stories260K.gguf" ]; then
  check "run --chat without a model template says how to give one" 1 "has no chat template.*--chat-template FILE" -- \
    "$exe" run -m "$shared/models/stories260K.gguf" --prompt hi --chat -n 2
  printf '{{ bos_token }}User: {{ messages[0].content }}\nAssistant:' > "$tmp/chat.jinja"
  check "run --chat renders the prompt through the template" 0 '"prompt_ids":\[1,' -- \
    "$exe" run -m "$shared/models/stories260K.gguf" --prompt hi --chat --chat-template "$tmp/chat.jinja" -n 2 --json
fi

if [ "$failures" -gt 0 ]; then
  echo "$failures check(s) failed"
  exit 1
fi
echo "all template checks passed"
