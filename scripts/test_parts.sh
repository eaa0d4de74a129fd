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
# The unit half on pytest-xdist, one worker per core, a whole file per worker at a time
# (tests/conftest.py: each file is its own xdist group), except tests/tui: Textual apps
# driven by Pilot miss frames when both cores are busy (a panel not yet drawn, a snapshot
# a frame early), so they run after, in one process. The integration half runs on 2
# workers too, each with a sandbox of its own; a test marked `alone` (it pauses, kills,
# partitions or caps a node, or its figures are timing-bound) runs with no other test
# beside it (tests/conftest.py turn_of): on 2 cores, 2-3 workers without that drove the
# load average to 26-38 and timing-bound tests failed (docs/testing.md).
# INTEGRATION_WORKERS=0 runs it in one process. The slowest tests of each run are printed.
UNIT_WORKERS="${UNIT_WORKERS:-2}"
INTEGRATION_WORKERS="${INTEGRATION_WORKERS:-2}"
XDIST=(--dist loadgroup --no-loadscope-reorder)
unit_half() {
  "$VENV/bin/pytest" -m "not integration" -q -n "$UNIT_WORKERS" "${XDIST[@]}" --ignore=tests/tui \
    --durations=20 || return $?
  "$VENV/bin/pytest" -m "not integration" -q tests/tui --durations=10
}
part unit unit_half
[ "$rc" = 0 ] || exit "$rc"
if [ "$INTEGRATION_WORKERS" -gt 0 ]; then
  part integration "$VENV/bin/pytest" -m integration -q -n "$INTEGRATION_WORKERS" "${XDIST[@]}" --durations=30
else
  part integration "$VENV/bin/pytest" -m integration -q --durations=30
fi
exit "$rc"
