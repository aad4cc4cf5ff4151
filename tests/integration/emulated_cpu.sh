#!/usr/bin/env bash
# Runs a command on an emulated x86-64 CPU (qemu-user), so that code compiled for an ISA the
# CPU lacks faults there as it would on a user's desktop. qemu's TCG implements no AVX-512,
# so an AVX-512 instruction is SIGILL on every model; its "max" model is an AVX2 CPU and
# "Nehalem" an SSE4.2 one without AVX, and CPUID answers accordingly, so dispatch picks the
# paths such a CPU would. Without qemu-x86_64 the test is skipped (exit 77), except under
# CI=true, where scripts/setup installs it.
# usage: emulated_cpu.sh CPU_MODEL COMMAND [ARGS...]
set -euo pipefail
cpu="$1"
shift
if [ "$(uname -m)" != "x86_64" ]; then
  echo "SKIPPED: emulating an x86-64 CPU model needs an x86-64 host"; exit 77
fi
if ! command -v qemu-x86_64 > /dev/null; then
  if [ "${CI:-}" = "true" ]; then
    echo "FAILED: qemu-x86_64 is missing and CI=true requires it (scripts/setup installs qemu-user)"; exit 1
  fi
  echo "SKIPPED: qemu-x86_64 is missing (apt-get install qemu-user)"; exit 77
fi
# Detection alone decides the kernels, as on a user's machine.
unset SWITCHYARD_CPU_ISA
exec qemu-x86_64 -cpu "$cpu" "$@"
