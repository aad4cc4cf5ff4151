#!/usr/bin/env bash
# Deterministic replay of one fuzz target, as ctest runs it: every file of the committed corpus
# tests/fuzz/corpus/NAME/ (seeds and every crash ever found) runs first, then a fixed number
# of mutations from a fixed seed. Same commit, same inputs, same result. New inputs go to a
# scratch folder, so the committed corpus is never written.
# Usage: replay.sh SOURCE_DIR FUZZ_BUILD_DIR NAME [RUNS]
set -euo pipefail
src="$1"
out="$(cd "$2" && pwd)"
name="$3"
runs="${4:-20000}"
corpus="$src/tests/fuzz/corpus/$name"
exe="$out/${name}_fuzz"

[ -x "$exe" ] || { echo "FAILED: $exe was not built (see $out.build.log)" >&2; exit 1; }
[ -d "$corpus" ] && [ -n "$(ls -A "$corpus")" ] || { echo "FAILED: the corpus $corpus is empty or missing" >&2; exit 1; }
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
cd "$scratch"
mkdir new
# The corpus goes in as an explicit, name-sorted list: libFuzzer orders seeds by size only,
# so a folder's readdir order (which differs between file systems and clones) would decide
# the order of same-sized seeds and with it every later mutation.
(cd "$corpus" && LC_ALL=C ls -1 | sed "s|^|$corpus/|" | paste -sd, - | tr -d "\n") > seeds.txt
# Address-space randomisation off: comparison operands that libFuzzer records and splices into
# inputs include pointers (std::string compares its data pointer), so with ASLR the same seed
# mutates differently from one run to the next. setarch -R needs the personality syscall; a
# sandbox without it still replays the corpus, only less repeatably, and says so.
no_aslr=(setarch "$(uname -m)" -R)
if ! "${no_aslr[@]}" true 2> /dev/null; then
  echo "note: setarch -R is not permitted here; the mutation runs depend on address layout"
  no_aslr=()
fi
# -seed, -runs and -reload=0 make the run repeatable; -timeout (a hang detector: inputs take
# milliseconds) and -rss_limit_mb turn a hang or a runaway allocation into a failure;
# -artifact_prefix keeps crash files out of the source tree.
"${no_aslr[@]}" "$exe" "$scratch/new" -seed_inputs=@seeds.txt -seed=1 -runs="$runs" -reload=0 -max_len=65536 \
  -timeout=20 -rss_limit_mb=2048 \
  -artifact_prefix="$scratch/" -print_final_stats=1 > log.txt 2>&1 || {
  tail -80 log.txt >&2
  for f in "$scratch"/crash-* "$scratch"/leak-* "$scratch"/timeout-* "$scratch"/oom-*; do
    [ -e "$f" ] && echo "reproducer: $(basename "$f") ($(od -An -tx1 "$f" | tr -d " \n" | head -c 400))" >&2
  done
  echo "FAILED: $name fuzz replay; to keep the input, copy it into $corpus" >&2
  exit 1
}
grep -E '^(INFO: seed corpus|#[0-9]+ *INITED|stat::number_of_executed_units)' log.txt || true
grep -oE 'cov: [0-9]+ ft: [0-9]+ corp: [0-9]+' log.txt | tail -1 || true
echo "passed: $name, $(ls "$corpus" | wc -l) corpus files and $runs runs from seed 1"
