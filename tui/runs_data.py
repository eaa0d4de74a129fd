"""The runs list with the figures the runs screen shows (peak ops/s, worst p99)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

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


def list_runs(store: Path) -> list[dict[str, Any]]:
    if not Path(store).exists():
        return []
    with connect(Path(store), read_only=True) as con:
        cur = con.execute(RUNS_SQL)
        names = [d[0] for d in cur.description]
        return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]
