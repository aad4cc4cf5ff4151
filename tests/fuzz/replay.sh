#!/usr/bin/env bash
# Deterministic replay of one fuzz target, as ctest runs it: every file of the committed corpus
# tests/fuzz/corpus/NAME/ (seeds and every crash ever found) runs first, then a fixed number
# of mutations from a fixed seed. Same commit, same inputs, same result. New inputs go to a
# scratch folder, so the committed corpus is never written.
# Usage: replay.sh SOURCE_DIR FUZZ_BUILD_DIR NAME [RUNS]
set -euo pipefail
src="$1"
out="$2"
name="$3"
runs="${4:-20000}"
corpus="$src/tests/fuzz/corpus/$name"
exe="$out/${name}_fuzz"

[ -x "$exe" ] || { echo "FAILED: $exe was not built (see $out.build.log)" >&2; exit 1; }
[ -d "$corpus" ] && [ -n "$(ls -A "$corpus")" ] || { echo "FAILED: the corpus $corpus is empty or missing" >&2; exit 1; }
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
cd "$scratch"
# -seed and -runs make the run repeatable; -timeout and -rss_limit_mb turn a hang or a
# runaway allocation into a failure; -artifact_prefix keeps crash files out of the source tree.
"$exe" "$scratch" "$corpus" -seed=1 -runs="$runs" -max_len=65536 -timeout=20 -rss_limit_mb=2048 \
  -artifact_prefix="$scratch/" -print_final_stats=1 > log.txt 2>&1 || {
  tail -80 log.txt >&2
  for f in "$scratch"/crash-* "$scratch"/leak-* "$scratch"/timeout-* "$scratch"/oom-*; do
    [ -e "$f" ] && echo "reproducer: $(basename "$f") ($(od -An -tx1 "$f" | tr -d " \n" | head -c 400))" >&2
  done
  echo "FAILED: $name fuzz replay; to keep the input, copy it into $corpus" >&2
  exit 1
}
grep -E '^(INFO: seed|#[0-9]+ *(INITED|DONE)|stat::number_of_executed_units)' log.txt || true
echo "passed: $name, $(ls "$corpus" | wc -l) corpus files and $runs runs from seed 1"
