#!/usr/bin/env bash
# `switchyard run` on an emulated CPU (emulated_cpu.sh) gives the token ids of a native run
# forced to the kernels that CPU gets: AVX2 for qemu's "max", scalar for "Nehalem". Greedy,
# on stories260K and on a Qwen3.6-style fixture (K-quants, routed experts, linear attention).
#   run_emulated.sh CPU_MODEL SWITCHYARD SHARED_DIR
set -uo pipefail
cpu="$1"
exe="$2"
shared="$3"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
. "$here/check.sh"

require_shared "$shared" models
case "$cpu" in
  max) isa=avx2 ;;
  Nehalem) isa=scalar ;;
  *) echo "run_emulated.sh: no native ISA is known for CPU model '$cpu'" >&2; exit 2 ;;
esac
ids() { python3 -c 'import json, sys; print(json.load(sys.stdin)["ids"])' 2> /dev/null; }
for model in models/stories260K.gguf fixtures/qwen35moe-e256-q4_k_m.gguf; do
  args=(run -m "$shared/$model" --prompt-ids 1,2,3,4 -n 24 --temp 0 -t 2 --json)
  native=$(SWITCHYARD_CPU_ISA=$isa "$exe" "${args[@]}" 2> /dev/null | ids)
  emulated=$(bash "$here/emulated_cpu.sh" "$cpu" "$exe" "${args[@]}" 2> "$tmp/stderr")
  rc=$?
  if [ $rc -eq 77 ]; then echo "$emulated"; exit 77; fi
  [ $rc -eq 0 ] || tail -5 "$tmp/stderr"
  check "$model: a native $isa run gives ids" 0 "^\[[0-9]" -- echo "$native"
  check "$model runs on qemu -cpu $cpu" 0 "^0$" -- echo "$rc"
  got=$(ids <<< "$emulated")
  check "$model on qemu -cpu $cpu: the ids of the native $isa run" 0 "^same$" -- \
    bash -c '[ "$1" = "$2" ] && echo same || echo "got $1, the native run $2"' _ "$got" "$native"
done
[ "$failures" -eq 0 ] || { echo "$failures check(s) failed"; exit 1; }
