#!/usr/bin/env bash
# The switchyard command line as a user meets it: exit codes and messages.
set -uo pipefail
# Absolute, so checks that change directory still find it when given as build/bin/switchyard.
exe="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
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
: > "$tmp/model.gguf"  # the shipped configs name a model that is not in the repository
check "all shipped configs validate" 0 "demo.yaml: ok" -- bash -c "\"$exe\" validate \"$src\"/configs/*.yaml --set model.path=\"$tmp/model.gguf\""

cat > "$tmp/bad.yaml" <<'YAML'
model: m.gguf
context:
  flash_atention: true
YAML
check "invalid pipeline exits 1 with file:line:col" 1 "bad.yaml:3:3: unknown key 'flash_atention' in 'context'; did you mean 'flash_attention'\?" -- "$exe" validate "$tmp/bad.yaml"
check "one bad file fails the run, the good one is still reported" 1 "demo.yaml: ok" -- "$exe" validate "$src/configs/demo.yaml" "$tmp/bad.yaml"
check "--set on validate" 1 "'context.length' must be between 16 and 2147483647, got 1" -- "$exe" validate "$src/configs/demo.yaml" --set context.length=1
check "missing file" 1 "pipeline file '.*/nope.yaml' does not exist" -- "$exe" validate "$tmp/nope.yaml"

# Nothing a user gives kills the process (issue 14): a directory where a file is expected,
# numbers past any range, a YAML alias bomb. Each ends with exit 1 or 2 and a sentence
# naming the flag or key; exit 134 (std::terminate) is the failure these guard against.
mkdir -p "$tmp/dir"
"$exe" synth -o "$tmp/demo.gguf" > /dev/null 2>&1
printf 'Hi' > "$tmp/t.jinja"
isdir="'$tmp/dir' is a directory; give a file"
check "run --prompt-file DIR" 1 "--file $isdir" -- "$exe" run -m "$tmp/demo.gguf" --prompt-file "$tmp/dir"
check "run --chat-template DIR" 1 "--chat-template $isdir" -- "$exe" run -m "$tmp/demo.gguf" --chat --prompt hi --chat-template "$tmp/dir"
check "run --logits-out DIR" 1 "--logits-out $isdir" -- "$exe" run -m "$tmp/demo.gguf" --prompt-ids 1 --logits-out "$tmp/dir"
check "run -P DIR" 1 "pipeline file $isdir" -- "$exe" run -P "$tmp/dir" --prompt-ids 1
check "tokenize --file DIR" 1 "--file $isdir" -- "$exe" tokenize -m "$tmp/demo.gguf" --file "$tmp/dir"
check "tokenize --tokenizer DIR" 1 "--tokenizer $isdir" -- "$exe" tokenize --tokenizer "$tmp/dir" --text hi
check "template --template DIR" 1 "--template $isdir" -- "$exe" template --template "$tmp/dir"
check "template --context DIR" 1 "--context $isdir" -- "$exe" template --template "$tmp/t.jinja" --context "$tmp/dir"
check "validate DIR" 1 "pipeline file $isdir" -- "$exe" validate "$tmp/dir"
check "synth -o DIR" 2 "-o $isdir" -- "$exe" synth -o "$tmp/dir"
check "synth --tokenizer DIR" 2 "--tokenizer $isdir" -- "$exe" synth --tokenizer "$tmp/dir" -o "$tmp/x.gguf"
check "synth --topology DIR" 2 "the topology file $isdir" -- "$exe" synth --topology "$tmp/dir" -o "$tmp/x.gguf"
check "plan --topology DIR" 2 "the topology file $isdir" -- "$exe" plan --topology "$tmp/dir"
# A directory named tokenizer.json, or one where the optional tokenizer_config.json belongs.
mkdir -p "$tmp/tokdir/tokenizer.json" "$tmp/tok/tokenizer_config.json"
printf '{"model":{"type":"BPE","vocab":{"a":0,"b":1},"merges":[]}}' > "$tmp/tok/tokenizer.json"
cfgdir="'$tmp/tok/tokenizer_config.json' is a directory; give a file"
check "tokenize --tokenizer tokenizer.json DIR" 1 "--tokenizer '$tmp/tokdir/tokenizer.json' is a directory; give a file" \
  -- "$exe" tokenize --tokenizer "$tmp/tokdir/tokenizer.json" --text ab
check "tokenize: tokenizer_config.json DIR" 1 "the tokenizer config $cfgdir" -- "$exe" tokenize --tokenizer "$tmp/tok/tokenizer.json" --text ab
check "synth: tokenizer_config.json DIR" 2 "the tokenizer config $cfgdir" -- "$exe" synth --tokenizer "$tmp/tok/tokenizer.json" -o "$tmp/x.gguf"
printf 'model:\n  path: %s\n  tokenizer: %s\n' "$tmp/demo.gguf" "$tmp/tok/tokenizer.json" > "$tmp/tok.yaml"
check "run --chat: tokenizer_config.json DIR" 1 "the tokenizer config $cfgdir" -- "$exe" run -P "$tmp/tok.yaml" --chat --prompt hi -n 1
check "chat /save and /load DIR" 0 "\[/save $isdir.*\[/load $isdir" -- bash -c "printf '/save $tmp/dir\n/load $tmp/dir\n' | \"$exe\" chat -m \"$tmp/demo.gguf\" | tr '\n' ' '"

check "--set list index past 2^64" 1 "'sampling.99999999999999999999': the list has 1 items, so '99999999999999999999' is not a valid index" \
  -- "$exe" validate "$src/configs/demo.yaml" --set sampling.99999999999999999999.top_k=1
check "--set integer past int64" 1 "'context.length' must be between 16 and 2147483647, got 99999999999999999999" \
  -- "$exe" validate "$src/configs/demo.yaml" --set context.length=99999999999999999999
check "--set size past 2^64 bytes" 1 "'placement.headroom' must be .* below 16 EiB" \
  -- "$exe" validate "$src/configs/demo.yaml" --set placement.headroom=20000000000000000000
check "plan --ctx past int64" 2 "--ctx-size: must be an integer from 1 to 2147483647, got '99999999999999999999'" \
  -- "$exe" plan --topology demo --ctx 99999999999999999999
check "plan --ctx as a float" 2 "--ctx-size: must be an integer from 1 to 2147483647, got '1e20'" -- "$exe" plan --topology demo --ctx 1e20
check "plan --vram past 2^64 bytes" 2 "--vram '20000000000000000000B' is not a size" \
  -- "$exe" plan --topology demo --vram 20000000000000000000B --cpu-bandwidth 1GB/s
check "run -n past int64" 2 "--n-predict: must be an integer from -1 to 2147483647" \
  -- "$exe" run -m "$tmp/demo.gguf" --prompt-ids 1 -n 99999999999999999999
check "run --prompt-ids past int32" 1 "'2147483648' is not a token id" -- "$exe" run -m "$tmp/demo.gguf" --prompt-ids 1,2147483648
check "detokenize --ids past int32" 1 "'4294967297' is not a token id" -- "$exe" detokenize -m "$tmp/demo.gguf" --ids 4294967297
check "synth --seed past 2^64" 2 "--seed: must be an integer from 0 to 18446744073709551615, got '18446744073709551616'" \
  -- "$exe" synth --seed 18446744073709551616 -o "$tmp/x.gguf"
check "synth --seed -2" 2 "--seed: must be an integer from 0 to 18446744073709551615, got '-2'" -- "$exe" synth --seed -2 -o "$tmp/x.gguf"
# Integer flags are decimal as typed: CLI11 alone would read "010" in base 8.
check "synth --seed 010 is ten" 0 "^same$" -- bash -c "\"$exe\" synth --seed 010 -o \"$tmp/s010.gguf\" > /dev/null && \"$exe\" synth --seed 10 -o \"$tmp/s10.gguf\" > /dev/null && cmp -s \"$tmp/s010.gguf\" \"$tmp/s10.gguf\" && echo same"
check "synth --layers past the limit" 2 "--layers: must be an integer from 0 to 65536" -- "$exe" synth --layers 99999999999 -o "$tmp/x.gguf"

# Nine lines of nine aliases each: 9^9 nodes once expanded.
{
  echo 'a: &a [x, x, x, x, x, x, x, x, x]'
  prev=a
  for n in b c d e f g h i; do echo "$n: &$n [*$prev, *$prev, *$prev, *$prev, *$prev, *$prev, *$prev, *$prev, *$prev]"; prev=$n; done
} > "$tmp/bomb.yaml"
check "YAML alias bomb" 1 "bomb.yaml:5:1: the document expands to more than 10000 nodes" -- "$exe" validate "$tmp/bomb.yaml"
check "deeply nested override pattern" 1 "the regular expression nests groups more than 32 deep" \
  -- "$exe" validate "$src/configs/demo.yaml" --set "placement.overrides=[\"$(printf '(%.0s' {1..40})a$(printf ')%.0s' {1..40})=cpu\"]"

# --json is valid JSON whatever the bytes: token pieces that are part of a UTF-8 sequence
# (byte tokens), decoded text and plugin paths that are not UTF-8 print each invalid byte as
# \xNN, as Python's backslashreplace does (the escaping inspect uses).
mkdir -p "$tmp/bl"
python3 -c 'import json, sys; json.dump({"model": {"type": "BPE", "vocab": {"\u00c3": 0, "\u00a9": 1, "a": 2}, "merges": []},
  "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": False}, "decoder": {"type": "ByteLevel"}}, open(sys.argv[1], "w"))' \
  "$tmp/bl/tokenizer.json"
plugdir="$tmp/p$(printf '\xff')"
mkdir -p "$plugdir"
cp "$(dirname "$exe")/../lib/switchyard/plugins/libswitchyard-samplers.so" "$plugdir/libcopy.so"
check "--json escapes bytes that are not UTF-8 as \\xNN" 0 "^ok$" -- python3 - "$exe" "$tmp" "$plugdir" <<'PY'
import json, os, subprocess, sys
exe, tmp, plugdir = sys.argv[1], sys.argv[2], os.fsencode(sys.argv[3])
br = lambda b: b.decode("utf-8", "backslashreplace")
def js(*args, env=None):
    return json.loads(subprocess.run([exe, *args], capture_output=True, check=True, env=env).stdout)
tok = tmp + "/bl/tokenizer.json"
# "aé" is the bytes 61 c3 a9; the GPT-2 byte alphabet spells c3 as U+00C3 and a9 as U+00A9.
t = js("tokenize", "--tokenizer", tok, "--text", "a\u00e9", "--json")
assert t == {"ids": [2, 0, 1], "pieces": ["a", br(b"\xc3"), br(b"\xa9")]}, t
d = js("detokenize", "--tokenizer", tok, "--ids", "2,0", "--json")
assert d == {"text": br(b"a\xc3")}, d
p = js("plugins", "--json", env=dict(os.environ, SWITCHYARD_PLUGIN_PATH=plugdir))
files = {r["file"] for r in p["refused"]}
assert files == {br(plugdir + b"/libcopy.so")}, files
print("ok")
PY

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

# validate catches what run would refuse (issue 15, point 3).
printf 'model: model.gguf\nsampling: [ greedy, dist ]\n' > "$tmp/two-terminal.yaml"
check "validate: a sampler after the one that picks the token" 1 \
  "two-terminal.yaml:2:21: 'sampling\[1\]': greedy \(sampling\[0\]\) already picks the token, so dist would never run" \
  -- "$exe" validate "$tmp/two-terminal.yaml"
printf 'model: nothere.gguf\n' > "$tmp/no-model.yaml"
check "validate: a model file that does not exist" 1 "no-model.yaml:1:8: 'model': file '.*/nothere.gguf' does not exist" \
  -- "$exe" validate "$tmp/no-model.yaml"

echo "$failures failure(s)"
[ "$failures" = 0 ]
