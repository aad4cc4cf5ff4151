#!/usr/bin/env bash
# Help, examples, shell completion and the messages for mistyped flags, as a user meets them.
# Expected texts are written out here from the issue's wording, not produced by the binary.
set -uo pipefail
exe="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "${BASH_SOURCE[0]}")/check.sh"

# check_exact NAME EXPECTED_RC EXPECTED_OUTPUT -- command...: the whole output must match.
check_exact() {
  local name="$1" want_rc="$2" want="$3"
  shift 4
  local out rc
  out="$("$@" 2>&1)"
  rc=$?
  if [ "$rc" != "$want_rc" ] || [ "$out" != "$want" ]; then
    echo "FAIL [$name]: exit $rc (expected $want_rc); output:"; echo "$out" | head -20
    echo "expected:"; echo "$want"; failures=$((failures + 1)); return
  fi
  echo "ok   [$name]"
}

commands="plugins validate inspect run synth plan tokenize detokenize template chat conformance bench serve perplexity quantize imatrix eval convert gguf verify help completion"
set_hint="Any pipeline key can be set with --set KEY=VALUE (e.g. --set context.length=8192); see 'switchyard help run'."

# --- Unknown options and stray words ---------------------------------------------------
# The misspelt option's value (0.7) is not reported as a second mistake.
check_exact "unknown option: nearest spelling and the --set pointer" 2 \
  "switchyard run: unknown option '--tmep'; did you mean '--temp'?
$set_hint" -- "$exe" run -m m.gguf --tmep 0.7 -p Hello
check_exact "unknown options and stray words are reported in the order typed" 2 \
  "switchyard run: unknown option '--zzz-a'
switchyard run: unexpected argument '1'
switchyard run: unexpected argument 'Hello' (--json takes no value)
switchyard run: unknown option '--prompt-flie'; did you mean '--prompt-file'?
$set_hint" -- "$exe" run -m m.gguf --zzz-a 1 --json Hello --prompt-flie p.txt
check_exact "a llama.cpp short spelling is suggested as typed" 2 \
  "switchyard run: unknown option '-ngll'; did you mean '-ngl'?
$set_hint" -- "$exe" run -m m.gguf -ngll 99
check_exact "--name=value: the name alone is quoted" 2 \
  "switchyard run: unknown option '--seeed'; did you mean '--seed'?
$set_hint" -- "$exe" run -m m.gguf --seeed=5
check_exact "after -- every word is an argument" 2 \
  "switchyard run: unexpected argument '--json'
See 'switchyard help run' for the options and examples." -- "$exe" run -m m.gguf -- --json
check_exact "a command without --set points to its help" 2 \
  "switchyard plugins: unexpected argument 'extra' (--json takes no value)
See 'switchyard help plugins' for the options and examples." -- "$exe" plugins --json extra
check "other CLI11 errors name the command" 2 "^switchyard synth: --layers: must be an integer from 0 to 65536" \
  -- "$exe" synth --layers 99999999999 -o "$tmp/x.gguf"
check "a missing required option names the command" 2 "^switchyard detokenize: --ids is required" -- "$exe" detokenize -m m.gguf

# --- --parse-only: checks the flags, runs nothing --------------------------------------
check "--parse-only accepts a valid line" 0 "^$" -- "$exe" --parse-only synth --topology demo -o "$tmp/never.gguf"
[ -e "$tmp/never.gguf" ] && { echo "FAIL [--parse-only ran synth]"; failures=$((failures + 1)); }
check "--parse-only still refuses unknown flags" 2 "unknown option '--bogus'" -- "$exe" --parse-only run --bogus

# --- help and examples ------------------------------------------------------------------
check_exact "help is --help" 0 "$("$exe" --help)" -- "$exe" help
check "help lists every command" 0 "Run 'switchyard help COMMAND'" -- "$exe" help
for c in $commands; do
  check "help $c: usage and examples" 0 "^Usage: switchyard $c( |$)" -- "$exe" help "$c"
  check "help $c has Examples:" 0 "^Examples:$" -- "$exe" help "$c"
  check_exact "help $c is $c --help" 0 "$("$exe" "$c" --help)" -- "$exe" help "$c"
  n=$("$exe" help "$c" | grep -c '^  switchyard ')
  if [ "$n" -lt 2 ] || [ "$n" -gt 5 ]; then
    echo "FAIL [help $c: $n examples, expected 2 to 5]"; failures=$((failures + 1))
  else
    echo "ok   [help $c: $n examples]"
  fi
  # Every example parses with this build's flags: run through --parse-only, from a directory
  # where none of its files exist (so only the command line is checked). A redirection at
  # the end is not part of the command.
  while IFS= read -r line; do
    cmdline="${line#  switchyard }"
    cmdline="${cmdline%% [>|<]*}"
    out="$(cd "$tmp" && eval "\"\$exe\" --parse-only $cmdline" 2>&1)"
    rc=$?
    if [ "$rc" != 0 ]; then
      echo "FAIL [example does not parse: $line]"; echo "$out" | head -5; failures=$((failures + 1))
    else
      echo "ok   [example parses: ${line#  }]"
    fi
  done < <("$exe" help "$c" | grep '^  switchyard ')
done
check "help of an unknown command suggests the nearest" 2 "^switchyard help: command: no such command 'rnu'; did you mean 'run'\?" \
  -- "$exe" help rnu

# --- completion -------------------------------------------------------------------------
check "completion for another shell lists bash" 2 "^switchyard completion: shell: no such shell 'zsh' \(one of: bash\)" \
  -- "$exe" completion zsh
"$exe" completion bash > "$tmp/completion.bash"
check "the completion script is valid bash" 0 "" -- bash -n "$tmp/completion.bash"

# complete WORD...: loads the script and completes the last word (empty: a fresh word), one
# candidate per line, sorted (file names come in directory order), from $tmp.
complete_words() {
  (cd "$tmp" && bash -c '. ./completion.bash; COMP_WORDS=(switchyard "$@"); COMP_CWORD=$#; _switchyard
    printf "%s\n" "${COMPREPLY[@]}"' _ "$@") | LC_ALL=C sort
}
touch "$tmp/model.gguf" "$tmp/models.txt"
check_exact "complete a command" 0 "run" -- complete_words ru
check_exact "complete a command after a global option's value" 0 "run" -- complete_words --log-level debug ru
check_exact "complete an option" 0 "--temp" -- complete_words run -m model.gguf --tem
check_exact "complete a llama.cpp short spelling" 0 "-ngl" -- complete_words run -ng
check_exact "complete a file after -m" 0 "model.gguf
models.txt" -- complete_words run -m mod
check_exact "no guesses for a number" 0 "" -- complete_words run -n ""
check_exact "complete help's command" 0 "plan
plugins" -- complete_words help pl
check_exact "complete the shell" 0 "bash" -- complete_words completion ""
check_exact "complete validate's files" 0 "model.gguf
models.txt" -- complete_words validate mo

[ "$failures" = 0 ] || { echo "$failures failure(s)"; exit 1; }
echo "all help checks passed"
