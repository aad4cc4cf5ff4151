#!/usr/bin/env bash
# `switchyard chat` in a real terminal (tmux): the banner, a streamed answer, Ctrl-C
# stopping an answer without quitting, a command, and /exit. Needs the shared
# stories260K model; skipped without it (exit 77) unless CI=true.
set -uo pipefail
exe="$1"
src="$2"
shared="$3"
model="$shared/models/stories260K.gguf"
if [ ! -f "$model" ] || ! command -v tmux > /dev/null; then
  [ "${CI:-}" = true ] && { echo "FAIL: chat under tmux needs $model and tmux (scripts/setup installs tmux)"; exit 1; }
  echo "SKIPPED: chat under tmux needs $model and tmux"
  exit 77
fi
# Piped stdin: no prompt, the answer, and commands.
out="$(printf 'Once upon a time\n/params\n' | (cd "$src" && "$exe" chat -P configs/demo.yaml -n 24) 2>&1)"
if grep -q "there was a little girl" <<< "$out" && grep -q "\[sampling: greedy" <<< "$out"; then
  echo "ok   [chat with piped stdin]"
else
  echo "FAIL [chat with piped stdin]"; echo "$out" | head; failures_pipe=1
fi

session="sychat$$"
sock="$(mktemp -u)"
t() { tmux -S "$sock" "$@"; }
trap 't kill-server 2>/dev/null; rm -f "$sock"' EXIT
failures=${failures_pipe:-0}
wait_for() {  # wait_for NAME REGEX: poll the pane for up to 30 s
  for _ in $(seq 300); do
    if t capture-pane -p -t "$session" -S -200 | grep -Eq -- "$2"; then echo "ok   [$1]"; return 0; fi
    sleep 0.1
  done
  echo "FAIL [$1]: the pane never showed /$2/"; t capture-pane -p -t "$session" -S -200 | tail -20; failures=$((failures + 1))
  return 1
}

t new-session -d -s "$session" -x 160 -y 50 \
  "$exe chat -m $model --chat-template $src/configs/templates/story.jinja -n 3000 --set context.length=4096 --set 'sampling=[greedy]'; echo CHAT-ENDED; sleep 5"
wait_for "banner and prompt" "Commands: /reset"
t send-keys -t "$session" "Once upon a time" Enter
wait_for "a streamed answer" "there was a little girl named Lily"
t send-keys -t "$session" C-c  # the answer (up to 3000 tokens) is still streaming
wait_for "Ctrl-C stops the answer without quitting" "\[interrupted\]"
wait_for "the prompt comes back" "^>"
t send-keys -t "$session" "/params" Enter
wait_for "a command after the interruption" "\[sampling: greedy"
t send-keys -t "$session" "/exit" Enter
wait_for "/exit quits" "CHAT-ENDED"

[ "$failures" = 0 ] && echo "all chat checks passed"
[ "$failures" = 0 ]
