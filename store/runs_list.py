"""The runs list with the figures the runs screen shows (peak ops/s, worst p99)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import duckdb

from loadtower.errors import LoadtowerError
from loadtower.store.connection import connect

RUNS_SQL = """
WITH per_second AS (
    SELECT run_id, ts, sum(ops) AS ops FROM op_second GROUP BY run_id, ts
), peak AS (
    SELECT run_id, max(ops) AS peak_ops FROM per_second GROUP BY run_id
), worst AS (
    SELECT run_id, max(p99_ms) AS p99_ms FROM phase_summary GROUP BY run_id
)
SELECT r.id, r.name, r.scenario, r.status, r.reason, r.started, r.ended,
       coalesce(peak.peak_ops, 0) AS peak_ops, worst.p99_ms
FROM runs r LEFT JOIN peak ON peak.run_id = r.id LEFT JOIN worst ON worst.run_id = r.id
ORDER BY r.started DESC
"""


@dataclass(frozen=True)
class RunListing:
    """One run of the runs list: its row and two figures over all its samples."""

    id: str
    name: str
    scenario: str
    status: str
    reason: str | None
    started: float
    ended: float | None
    peak_ops: float  # the busiest second's ops over all ops
    p99_ms: float | None  # the worst p99 of any phase and op (None: no summary yet)


def list_runs(store: Path) -> list[RunListing]:
    """The runs in `store`, newest first; [] when there is no store yet."""
    if not Path(store).exists():
        return []
    try:
        with connect(Path(store), read_only=True) as con:
            rows = con.execute(RUNS_SQL).fetchall()
    except duckdb.Error as exc:
        raise LoadtowerError(f"cannot read the runs of {store}: {exc}") from exc
    return [
        RunListing(
            id=str(run_id), name=str(name or ""), scenario=str(scenario or ""),
            status=str(status or ""), reason=None if reason is None else str(reason),
            started=float(started), ended=None if ended is None else float(ended),
            peak_ops=float(peak or 0), p99_ms=None if p99 is None else float(p99),
        )
        for run_id, name, scenario, status, reason, started, ended, peak, p99 in rows
    ]
