#!/usr/bin/env bash
# `make test`: lint, the unit tests and the integration tests, each timed; the times of
# every part that ran (install included, when make ran it just before: INSTALL_S) are
# printed at the end, also when a part fails (its exit code is the script's).
set -uo pipefail
cd "$(dirname "$0")/.."
VENV="${VENV:-.venv}"
parts=()
rc=0
part() {
  local name=$1
  shift
  local t0
  t0=$(date +%s)
  "$@"
  rc=$?
  parts+=("$name $(($(date +%s) - t0)) s (exit $rc)")
}
summary() {
  echo "test parts:"
  for p in "${parts[@]}"; do echo "  $p"; done
}
trap summary EXIT
part lint make --no-print-directory lint
[ "$rc" = 0 ] || exit "$rc"
# Both halves on pytest-xdist, a whole file (tests/conftest.py: its xdist group) per worker
# at a time: the unit half is CPU-bound (one worker per core); the integration half mostly
# waits on services, so it runs more workers than cores, each with its own sandbox
# (docs/testing.md). The 30 slowest tests of each half are printed.
UNIT_WORKERS="${UNIT_WORKERS:-2}"
INTEGRATION_WORKERS="${INTEGRATION_WORKERS:-3}"
XDIST=(--dist loadgroup --no-loadscope-reorder --durations=30)
part unit "$VENV/bin/pytest" -m "not integration" -q -n "$UNIT_WORKERS" "${XDIST[@]}"
[ "$rc" = 0 ] || exit "$rc"
part integration "$VENV/bin/pytest" -m integration -q -n "$INTEGRATION_WORKERS" "${XDIST[@]}"
exit "$rc"
