#!/usr/bin/env bash
# Configures and builds every fuzz target (tests/fuzz/*_fuzz.cpp) with clang into OUT_DIR.
# Usage: build.sh SOURCE_DIR OUT_DIR
set -euo pipefail
src="$1"
out="$2"

if ! command -v clang++ > /dev/null; then
  echo "FAILED: clang++ is missing; scripts/setup installs clang and libclang-rt-14-dev" >&2
  exit 1
fi
mkdir -p "$out"
# Concurrent builds of the same folder (ctest --parallel, a developer's scripts/fuzz) wait
# for each other instead of corrupting ninja's state.
exec 9> "$out.lock"
flock 9
cmake -S "$src/tests/fuzz" -B "$out" -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=Debug > "$out.configure.log" 2>&1 \
  || { cat "$out.configure.log" >&2; exit 1; }
cmake --build "$out" > "$out.build.log" 2>&1 || { tail -60 "$out.build.log" >&2; exit 1; }
echo "built: $(cd "$out" && ls -- *_fuzz | tr '\n' ' ')"
