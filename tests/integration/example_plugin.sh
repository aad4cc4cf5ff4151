#!/usr/bin/env bash
# Installs the build into a temporary prefix, builds plugins/examples out of tree against
# that installed SDK (find_package(Switchyard)), and checks that the installed switchyard
# lists it, loads it, and validates a pipeline that uses it.
set -euo pipefail
build="$1"
src="$2"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$tmp/prefix" > "$tmp/install.log"
exe="$tmp/prefix/bin/switchyard"
[ -x "$exe" ] || fail "cmake --install did not install bin/switchyard"
for f in include/switchyard/plugin.hpp lib/cmake/Switchyard/SwitchyardConfig.cmake \
         lib/switchyard/plugins/libswitchyard-cpu.so lib/switchyard/plugins/libswitchyard-cpu.so.json \
         lib/switchyard/plugins/libswitchyard-samplers.so.json; do
  [ -e "$tmp/prefix/$f" ] || fail "the install lacks $f"
done

# The installed executable finds the installed plugins (next to itself), not the build tree's.
"$exe" plugins --json > "$tmp/installed.json"
grep -q "\"library\": \"$tmp/prefix/lib/switchyard/plugins/libswitchyard-cpu.so\"" "$tmp/installed.json" \
  || fail "installed switchyard did not list its own cpu plugin"

cmake -S "$src/plugins/examples" -B "$tmp/example" -G Ninja -DCMAKE_PREFIX_PATH="$tmp/prefix" \
  -DCMAKE_BUILD_TYPE=Release > "$tmp/configure.log" || { cat "$tmp/configure.log"; fail "configure"; }
cmake --build "$tmp/example" > "$tmp/build.log" || { cat "$tmp/build.log"; fail "build"; }
[ -f "$tmp/example/libswitchyard-example-softcap.so.json" ] || fail "the example's manifest was not generated"

out="$(SWITCHYARD_PLUGIN_PATH="$tmp/example" "$exe" plugins --check)"
echo "$out"
grep -q "example-softcap 1.0.0" <<< "$out" || fail "the example plugin is not listed"
grep -q "sampler softcap 1.0.0" <<< "$out" || fail "the softcap component is not listed"
[ "$(echo "$out" | grep -c 'load: ok')" -ge 3 ] || fail "not every plugin loaded"
grep -q "load: ok" <<< "$out" || fail "the example plugin did not load"

: > "$tmp/m.gguf"  # validation checks that the model file exists
cat > "$tmp/p.yaml" <<'YAML'
model: m.gguf
backends: [ { plugin: cpu } ]
sampling: [ { softcap: 30 }, greedy ]
YAML
SWITCHYARD_PLUGIN_PATH="$tmp/example" "$exe" validate "$tmp/p.yaml" || fail "a pipeline using the example did not validate"
if SWITCHYARD_PLUGIN_PATH="$tmp/example" "$exe" validate "$tmp/p.yaml" --set 'sampling[0].softcap=-1' 2> "$tmp/err"; then
  fail "a negative cap was accepted"
fi
grep -q "'sampling\[0\].softcap' must be greater than 0 and at most 1000, got -1" "$tmp/err" \
  || { cat "$tmp/err"; fail "wrong message for a bad example parameter"; }
echo "PASS"
