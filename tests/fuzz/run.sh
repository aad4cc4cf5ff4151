#!/usr/bin/env bash
# Builds the fuzz targets with clang and runs each for SECONDS (default 60): the GGUF parser
# seeded with the shared GGUF files, then the chat-template interpreter seeded with the
# shared templates. Exits non-zero on any crash, leak or UB report.
# Usage: run.sh SOURCE_DIR BUILD_DIR SHARED_DIR [SECONDS]
set -euo pipefail
src="$1"
out="$2/fuzz"
shared="$3"
seconds="${4:-60}"

if ! command -v clang++ > /dev/null; then
  echo "FAILED: clang++ is missing; scripts/setup installs clang and libclang-rt-14-dev" >&2
  exit 1
fi
if [ ! -d "$shared" ]; then
  if [ "${CI:-}" = "true" ]; then echo "FAILED: shared data $shared missing under CI=true" >&2; exit 1; fi
  echo "SKIPPED: shared data $shared is missing; the fuzzer needs its seed corpus"
  exit 77
fi

cmake -S "$src/tests/fuzz" -B "$out" -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=Debug > "$out.configure.log" 2>&1 \
  || { cat "$out.configure.log"; exit 1; }
cmake --build "$out" > "$out.build.log" 2>&1 || { cat "$out.build.log"; exit 1; }

# Seeds: every GGUF under shared (read-only; new inputs go to the first, writable corpus dir).
mkdir -p "$out/corpus" "$out/seeds"
find "$shared" -name '*.gguf' -size -2M -exec ln -sf {} "$out/seeds/" \;
cd "$out"
./gguf_fuzz corpus seeds -max_total_time="$seconds" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
  -print_final_stats=1 2>&1 | tail -25
# pipefail: a crash in the fuzzer fails this script even through tail.

mkdir -p "$out/template_corpus" "$out/template_seeds"
find "$shared" -name '*.jinja' -exec ln -sf {} "$out/template_seeds/" \;
./template_fuzz template_corpus template_seeds -max_total_time="$seconds" -max_len=32768 -timeout=10 \
  -rss_limit_mb=2048 -print_final_stats=1 2>&1 | tail -25
