#!/usr/bin/env bash
# The switchyard command line as a user meets it: exit codes and messages.
set -uo pipefail
exe="$1"
src="$2"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "${BASH_SOURCE[0]}")/check.sh"

check "help lists the commands" 0 "plugins.*validate|validate" -- "$exe" --help
check "every subcommand has --help" 0 "--json" -- "$exe" plugins --help
check "validate --help" 0 "--set" -- "$exe" validate --help
check "unknown command suggests the nearest" 2 "unknown command 'valdate'; did you mean 'validate'\?" -- "$exe" valdate x
check "unknown command after global options" 2 "unknown command 'plugin'; did you mean 'plugins'\?" -- "$exe" --log-level info plugin
check "no command" 2 "subcommand" -- "$exe"
check "bad log level" 2 "unknown log level 'loud'" -- "$exe" --log-level loud plugins
check "version" 0 "switchyard 0\.1\.0" -- "$exe" --version
check "plugins lists the built-in plugins" 0 "backend cpu .*sampler greedy|sampler greedy" -- "$exe" plugins
check "plugins --json" 0 "\"search_path\"" -- "$exe" plugins --json
check "plugins --check loads every library" 0 "load: ok" -- "$exe" plugins --check
check "all shipped configs validate" 0 "demo.yaml: ok" -- bash -c "\"$exe\" validate \"$src\"/configs/*.yaml"

cat > "$tmp/bad.yaml" <<'YAML'
model: m.gguf
context:
  flash_atention: true
YAML
check "invalid pipeline exits 1 with file:line:col" 1 "bad.yaml:3:3: unknown key 'flash_atention' in 'context'; did you mean 'flash_attention'\?" -- "$exe" validate "$tmp/bad.yaml"
check "one bad file fails the run, the good one is still reported" 1 "demo.yaml: ok" -- "$exe" validate "$src/configs/demo.yaml" "$tmp/bad.yaml"
check "--set on validate" 1 "'context.length' must be between 16 and 16777216, got 1" -- "$exe" validate "$src/configs/demo.yaml" --set context.length=1
check "missing file" 1 "cannot read pipeline file" -- "$exe" validate "$tmp/nope.yaml"

# The current directory is never searched by accident: an empty SWITCHYARD_PLUGIN_PATH
# entry is ignored with a warning, and a plugin in the current directory stays unseen.
mkdir -p "$tmp/cwd"
cp "$(dirname "$exe")/../lib/switchyard/plugins/libswitchyard-samplers.so" "$tmp/cwd/libcopy.so"
check "empty path entry ignored" 0 "empty entry; ignored" -- bash -c "cd \"$tmp/cwd\" && SWITCHYARD_PLUGIN_PATH=: \"$exe\" plugins"
listing="$(cd "$tmp/cwd" && SWITCHYARD_PLUGIN_PATH=: "$exe" plugins 2>/dev/null)"
if grep -q libcopy.so <<< "$listing"; then
  echo "FAIL [cwd not searched]: a library in the current directory was picked up"; failures=$((failures + 1))
else
  echo "ok   [cwd not searched]"
fi

# --log-file receives the component loggers' lines.
SWITCHYARD_PLUGIN_PATH="$tmp/cwd" "$exe" --log-level debug --log-file "$tmp/log.txt" plugins > /dev/null 2>&1
if grep -q "\[registry\]" "$tmp/log.txt"; then echo "ok   [log file]"; else echo "FAIL [log file]"; failures=$((failures + 1)); fi

echo "$failures failure(s)"
[ "$failures" = 0 ]
