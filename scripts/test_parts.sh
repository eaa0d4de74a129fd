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
part unit "$VENV/bin/pytest" -m "not integration" -q
[ "$rc" = 0 ] || exit "$rc"
part integration "$VENV/bin/pytest" -m integration -q
exit "$rc"
