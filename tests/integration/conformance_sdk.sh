#!/usr/bin/env bash
# The conformance suite as an out-of-tree backend author uses it: install the build into a
# temporary prefix, configure a project that only does find_package(Switchyard) and
# switchyard_add_conformance_test(), and run its ctest. The cpu backend (installed) must
# pass a few ops with --require-all; a test naming a backend that is not installed must fail.
set -euo pipefail
build="$1"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$tmp/prefix" > "$tmp/install.log"
[ -f "$tmp/prefix/lib/cmake/Switchyard/SwitchyardConformance.cmake" ] || fail "the install lacks SwitchyardConformance.cmake"

mkdir -p "$tmp/project"
cat > "$tmp/project/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.25)
project(conformance_user LANGUAGES CXX)
find_package(Switchyard REQUIRED)
enable_testing()
if(NOT TARGET Switchyard::switchyard)
  message(FATAL_ERROR "find_package(Switchyard) did not define Switchyard::switchyard")
endif()
switchyard_add_conformance_test(cpu_conformance BACKEND cpu PLUGIN_DIR "${Switchyard_PLUGIN_DIR}"
  ARGS --ops add,rms_norm,get_rows --types F32,Q4_K --require-all)
switchyard_add_conformance_test(missing_backend BACKEND no_such_backend PLUGIN_DIR "${CMAKE_CURRENT_BINARY_DIR}")
CMAKE
cmake -S "$tmp/project" -B "$tmp/project/build" -DCMAKE_PREFIX_PATH="$tmp/prefix" > "$tmp/configure.log" 2>&1 \
  || { cat "$tmp/configure.log"; fail "configuring a project that uses find_package(Switchyard)"; }

# The test command is the installed executable, not the build tree's.
(cd "$tmp/project/build" && ctest -N -V) > "$tmp/list.log"
grep -qF "$tmp/prefix/bin/switchyard \"conformance\" \"cpu\" \"--plugin-path\"" "$tmp/list.log" \
  || { cat "$tmp/list.log"; fail "cpu_conformance does not run the installed switchyard conformance"; }

(cd "$tmp/project/build" && ctest -V) > "$tmp/ctest.log" 2>&1 && fail "ctest passed although one test names a missing backend"
cat "$tmp/ctest.log"
grep -Eq "cpu_conformance \.+ +Passed" "$tmp/ctest.log" || fail "the cpu conformance test did not pass"
grep -q "summary: .* cases: .* passed, 0 failed, 0 errors, 0 unsupported -> PASS" "$tmp/ctest.log" \
  || fail "the cpu run did not print a passing summary"
grep -Eq "missing_backend \.+\*\*\*Failed" "$tmp/ctest.log" || fail "the test of a missing backend did not fail"
grep -q "no backend plugin named 'no_such_backend'" "$tmp/ctest.log" || fail "the missing backend was not named"
echo "PASS"
