# Sourced by the integration scripts: check NAME EXPECTED_RC REGEX -- command...
# runs the command, compares its exit status and matches its output (stdout + stderr),
# and counts failures in $failures.
failures=0
check() {
  local name="$1" want="$2" regex="$3"
  shift 4
  local out rc
  out="$("$@" 2>&1)"
  rc=$?
  if [ "$rc" != "$want" ]; then
    echo "FAIL [$name]: exit $rc, expected $want"; echo "$out" | head -20; failures=$((failures + 1)); return
  fi
  # A here-string, not a pipe: grep -q exits at the first match, and under pipefail the
  # writer's SIGPIPE would turn a match into a failure.
  if ! grep -Eq -- "$regex" <<< "$out"; then
    echo "FAIL [$name]: output does not match /$regex/"; echo "$out" | head -20; failures=$((failures + 1)); return
  fi
  echo "ok   [$name]"
}

# Ends the script unless the shared data folder $1 has $2: skipped (exit 77) with a message,
# or a failure under CI=true, where the data must be there.
require_shared() {
  [ -d "$1/$2" ] && return 0
  if [ "${CI:-}" = true ]; then echo "FAIL: the shared data folder $1 is missing (CI=true)"; exit 1; fi
  echo "SKIPPED: the shared data folder $1 is missing"; exit 77
}

# llama.cpp's llama-perplexity ($SWITCHYARD_PEER_BIN or the peer-llama-cpp build), for the
# opt-in peer checks (SWITCHYARD_PEER_CHECK=1); empty when not asked for or not built.
peer_perplexity() {
  local p="${SWITCHYARD_PEER_BIN:-$HOME/.cache/switchyard-peers/llama.cpp/build/bin}/llama-perplexity"
  [ "${SWITCHYARD_PEER_CHECK:-}" = 1 ] && [ -x "$p" ] && echo "$p"
}
# Runs it with ARGS, printing its output. llama.cpp logs its results from a logging thread,
# and under load a run can exit before the last lines are out: a run without its final
# figures is repeated (three tries).
peer_run() {
  local p out i
  p="$(peer_perplexity)"
  for i in 1 2 3; do
    out="$(LD_LIBRARY_PATH="$(dirname "$p")" "$p" -t 2 "$@" 2>&1)"
    grep -Eq 'Final estimate|Same top p' <<< "$out" && break
  done
  printf '%s\n' "$out"
}

# check_killed_midway NAME FINAL -- command...: runs the command with the test hook
# SWITCHYARD_TEST_STOP_AFTER_TENSORS=3 (it stops itself after 3 tensors), kills it with
# SIGKILL there, and checks that the older file under FINAL is as it was and that the run's
# output existed only as one temporary (FINAL*.partial) beside it.
check_killed_midway() {
  local name="$1" final="$2" pid state="" partial
  shift 3
  echo "an older result" > "$final"
  SWITCHYARD_TEST_STOP_AFTER_TENSORS=3 "$@" > "$final.log" 2>&1 &
  pid=$!
  for _ in $(seq 1 400); do
    state=$(ps -o stat= -p "$pid" 2>/dev/null | tr -d ' ')
    [[ "$state" == T* ]] && break
    sleep 0.05
  done
  partial=$(find "$(dirname "$final")" -name "$(basename "$final")*.partial" | wc -l)
  kill -9 "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  if [[ "$state" == T* ]] && [ "$partial" = 1 ] && [ "$(cat "$final")" = "an older result" ]; then
    echo "ok   [$name]"
  else
    echo "FAIL [$name]: state '$state', temporaries $partial, final: $(head -c 40 "$final")"
    cat "$final.log"; failures=$((failures + 1))
  fi
}
