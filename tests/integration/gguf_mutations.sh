#!/usr/bin/env bash
# GGUF header mutations (issue 14): damaged copies of the demo models, made with fixed
# seeds by tests/tools/gguf_mutants, go through every command that opens a model. Each
# must end within seconds with exit 0 (the damage left a usable model), or 1 or 2 with a
# sentence on stderr: never a signal, std::terminate, a sanitizer report or a timeout.
# usage: gguf_mutations.sh SWITCHYARD GGUF_MUTANTS [MUTANTS_PER_MODEL]
set -uo pipefail
exe="$1"
mutants="$2"
per_model="${3:-30}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

failures=0
runs=0
"$exe" synth --topology demo --type q8_0 -o "$tmp/hybrid.gguf" > /dev/null || { echo "FAIL: synth demo"; exit 1; }
"$exe" synth --topology demo-llama --type q8_0 -o "$tmp/llama.gguf" > /dev/null || { echo "FAIL: synth demo-llama"; exit 1; }

# One command on one mutant: the exit status and what stderr ends with are checked.
try() {
  local label="$1"
  shift
  local err rc
  err="$(timeout 20 "$@" 2>&1 > /dev/null < /dev/null)"
  rc=$?
  runs=$((runs + 1))
  local why=""
  if [ "$rc" = 124 ]; then
    why="did not finish within 20 s"
  elif [ "$rc" != 0 ] && [ "$rc" != 1 ] && [ "$rc" != 2 ]; then
    why="exit $rc"
  elif grep -Eq "terminate called|Sanitizer|runtime error:|Assertion|core dumped" <<< "$err"; then
    why="crash report on stderr"
  elif [ "$rc" != 0 ] && ! grep -Eq "[A-Za-z]+ [A-Za-z]+" <<< "$(grep -v '^\s*$' <<< "$err" | tail -1)"; then
    why="exit $rc without a sentence on stderr"
  fi
  if [ -n "$why" ]; then
    echo "FAIL [$label]: $why"
    tail -5 <<< "$err"
    failures=$((failures + 1))
  fi
}

for model in hybrid llama; do
  dir="$tmp/$model-mutants"
  mkdir -p "$dir"
  seed=$([ "$model" = hybrid ] && echo 14 || echo 41)
  "$mutants" "$tmp/$model.gguf" "$dir" "$per_model" "$seed" > "$dir/list.txt" || { echo "FAIL: gguf_mutants"; exit 1; }
  for i in $(seq 0 $((per_model - 1))); do
    m="$dir/$(printf 'm%03d' "$i").gguf"
    what="$model $(sed -n "$((i + 1))p" "$dir/list.txt")"
    try "$what: inspect" "$exe" inspect "$m"
    try "$what: inspect --json" "$exe" inspect --json "$m"
    try "$what: inspect --tensors" "$exe" inspect --tensors "$m"
    try "$what: tokenize" "$exe" tokenize -m "$m" --text "Hello world"
    try "$what: run" "$exe" run -m "$m" --prompt-ids 1,2,3 -n 2 --seed 1
    try "$what: plan -m" "$exe" plan -m "$m" --ram 64GiB --cpu-bandwidth 50GB/s
    try "$what: chat (piped)" bash -c "printf 'Hello\n' | '$exe' chat -m '$m' -n 2 --seed 1"
  done
done

echo "$runs commands on $((2 * per_model)) mutants, $failures failed"
[ "$failures" = 0 ]
