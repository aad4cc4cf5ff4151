#!/usr/bin/env bash
# Audits the compiled objects for instructions a CPU may lack (issue 36), so that no code
# path executes one before dispatch has checked the CPU:
# 1. the ISA-specific kernel objects (ISA_LIST) define no external function, only the
#    constant kernel tables of backends/cpu/kernels/dot_tables.hpp, and nothing that runs
#    at load time (.init_array, .ctors);
# 2. every other object the build compiles (ALL_LIST) executes no AVX, AVX-512 or BMI
#    instruction except in the functions ALLOWED lists, each with the check that guards it.
# usage: isa_objects.sh ISA_LIST ALL_LIST ALLOWED
set -euo pipefail
isa_list="$1" all_list="$2" allowed="$3"
for tool in nm objdump; do
  command -v "$tool" > /dev/null || { echo "FAILED: $tool (binutils) is needed to read the objects"; exit 1; }
done
failures=0
fail() { echo "FAILED: $*"; failures=$((failures + 1)); }

mapfile -t isa_objects < <(grep -v '^$' "$isa_list")
[ "${#isa_objects[@]}" -gt 0 ] || fail "$isa_list lists no ISA object"
for obj in "${isa_objects[@]}"; do
  [ -f "$obj" ] || { fail "$obj is missing: build first"; continue; }
  # T: global code, W: weak symbol (an inline function whose copy the linker may pick for
  # every caller), i: an indirect function. Data (D, R, B, V) is what a table is.
  exported=$(nm --defined-only -g -C "$obj" | awk '$2 ~ /^[TWi]$/ { $1 = ""; $2 = ""; sub(/^  /, ""); print }')
  [ -z "$exported" ] || fail "$(basename "$obj") exports code, which a caller could run without dispatch: $exported"
  sections=$(objdump -h "$obj" | awk '$2 ~ /^\.(init_array|ctors|preinit_array)/ { print $2 }')
  [ -z "$sections" ] || fail "$(basename "$obj") runs code at load time ($sections), before any dispatch"
done
echo "checked ${#isa_objects[@]} ISA objects: tables only, nothing run at load time"

# Instructions outside plain x86-64 + SSE4.2: VEX/EVEX-encoded ones (their mnemonics start
# with v, but for the VMX instructions), YMM/ZMM/mask registers, and BMI1/2's integer ones.
pattern='\s(v[a-z0-9]+)\s|%[yz]mm|%k[0-7]\b|\s(andn|bextr|blsi|blsmsk|blsr|bzhi|mulx|pdep|pext|rorx|sarx|shlx|shrx|lzcnt)\s'
vmx='\s(verr|verw|vmcall|vmlaunch|vmresume|vmxoff|vmxon|vmread|vmwrite|vmptrld|vmptrst|vmclear|vmfunc|vmrun|vmload|vmsave|vmmcall)\s'
allow_re=$(grep -v '^\s*#' "$allowed" | sed -e 's/\s*#.*$//' -e '/^\s*$/d' | paste -sd '|')
checked=0
while read -r obj; do
  [ -n "$obj" ] || continue
  printf '%s\n' "${isa_objects[@]}" | grep -qxF "$obj" && continue
  [ -f "$obj" ] || { fail "$obj is missing: build first"; continue; }
  checked=$((checked + 1))
  funcs=$(objdump -d --no-show-raw-insn -C "$obj" | awk -v pat="$pattern" -v vmx="$vmx" '
    /^[0-9a-f]+ <.*>:$/ { fn = substr($0, index($0, "<") + 1); sub(/>:$/, "", fn); next }
    $0 ~ pat && $0 !~ vmx { print fn }' | sort -u)
  while IFS= read -r fn; do
    [ -n "$fn" ] || continue
    if [ -z "$allow_re" ] || ! grep -qE "^($allow_re)$" <<< "$fn"; then
      fail "$(basename "$obj"): $fn executes instructions beyond x86-64 + SSE4.2 without being listed in $(basename "$allowed") with its guard"
    fi
  done <<< "$funcs"
done < "$all_list"
echo "checked $checked other objects for AVX, AVX-512 and BMI instructions outside the guarded functions"
[ "$failures" -eq 0 ] || { echo "$failures problem(s)"; exit 1; }
