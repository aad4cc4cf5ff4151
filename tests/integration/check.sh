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
