#!/usr/bin/env bash
# The fixture part of the conformance suite on one backend:
#   conformance_fixtures.sh SWITCHYARD SHARED_DIR BACKEND [more conformance arguments]
# It needs SHARED_DIR/fixtures: without it the test is skipped with a visible message (exit
# 77), except under CI=true, where that is a failure. A backend without a usable device here
# (the suite's exit 3) is a skip too.
set -uo pipefail
exe="$1"
shared="$2"
backend="$3"
shift 3
if [ ! -d "$shared/fixtures" ]; then
  if [ "${CI:-}" = "true" ]; then
    echo "FAILED: the shared test data folder $shared/fixtures is missing, and CI=true requires it (set -DSWITCHYARD_SHARED_DIR=...)" >&2
    exit 1
  fi
  echo "SKIPPED: the shared test data folder $shared/fixtures is missing; the fixture conformance run did not happen"
  exit 77
fi
"$exe" --log-level error conformance "$backend" --fixtures "$shared/fixtures" --fixtures-only "$@"
rc=$?
if [ "$rc" = 3 ]; then
  # SWITCHYARD_DEVICE_OPTIONAL=1: a backend CI has no device for (CUDA) is skipped there too.
  if [ "${CI:-}" = "true" ] && [ "${SWITCHYARD_DEVICE_OPTIONAL:-}" != 1 ]; then
    echo "FAILED: backend $backend has no usable device, and CI=true requires one (CI installs mesa-vulkan-drivers)" >&2
    exit 1
  fi
  echo "SKIPPED: backend $backend has no usable device on this machine"
  exit 77
fi
exit "$rc"
