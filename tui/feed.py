"""What the dashboard shows, as immutable snapshots read from the store.

Live and replay use the same function: a snapshot of run R at cursor time T over a
window W. Live moves T with the newest stored second; replay moves it with the
playback clock. The store is opened read-only, so a run being written by a
headless `loadtower run` can be watched while it runs.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loadtower.store.connection import connect

LOG_LINES = 200
WINDOWS = (60, 300, 900, 0)  # seconds; 0 = the whole run


@dataclass(frozen=True)
class OpPoint:
    ts: int
    ops: int
    errors: int
    p50_ms: float
    p90_ms: float
    p99_ms: float


@dataclass(frozen=True)
class Snapshot:
    run: dict[str, Any]
    cursor: float
    first_ts: float
    last_ts: float
    window: int
    phases: list[dict[str, Any]]
    ops: dict[str, list[OpPoint]] = field(default_factory=dict)
    nodes: dict[str, list[tuple[int, float, float]]] = field(default_factory=dict)
    errors_by_class: dict[str, int] = field(default_factory=dict)
    events: list[dict[str, Any]] = field(default_factory=list)
    agents: list[dict[str, Any]] = field(default_factory=list)
    logs: list[dict[str, Any]] = field(default_factory=list)

    @property
    def x_range(self) -> tuple[float, float]:
        lo = self.first_ts if self.window == 0 else self.cursor - self.window
        return lo, self.cursor

    def phase_at(self, ts: float) -> str:
        current = ""
        for phase in self.phases:
            if phase["started"] is not None and phase["started"] <= ts:
                current = phase["name"]
        return current

    def last_second(self) -> tuple[float, float, int]:
        """ops/s, worst p99 and errors over ops in the newest second of the window."""
        newest = max((p[-1].ts for p in self.ops.values() if p), default=None)
        if newest is None:
            return 0.0, 0.0, 0
        points = [p[-1] for p in self.ops.values() if p and p[-1].ts == newest]
        return (
            float(sum(p.ops for p in points)),
            max(p.p99_ms for p in points),
            sum(p.errors for p in points),
        )


def _rows(con: Any, sql: str, params: list[Any]) -> list[dict[str, Any]]:
    cur = con.execute(sql, params)
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]


def run_bounds(store: Path, run_id: str) -> tuple[dict[str, Any], float, float]:
    """The run's row and its first and last stored second (for live and seeking)."""
    with connect(store, read_only=True) as con:
        run = _rows(con, "SELECT * FROM runs WHERE id = ?", [run_id])
        if not run:
            raise KeyError(run_id)
        bounds = con.execute(
            "SELECT min(ts), max(ts) FROM op_second WHERE run_id = ?", [run_id]
        ).fetchone()
    started = float(run[0]["started"])
    first = float(bounds[0]) if bounds and bounds[0] is not None else started
    last = float(bounds[1]) + 1 if bounds and bounds[1] is not None else first
    return run[0], first, last


def snapshot(store: Path, run_id: str, cursor: float | None, window: int) -> Snapshot:
    """The run as it was at `cursor` (None: the newest stored second)."""
    run, first, last = run_bounds(store, run_id)
    at = last if cursor is None else min(max(cursor, first), last)
    lo = first if window == 0 else at - window
    with connect(store, read_only=True) as con:
        phases = _rows(
            con,
            "SELECT idx, name, type, started, ended FROM phases WHERE run_id = ? ORDER BY idx",
            [run_id],
        )
        op_rows = _rows(
            con,
            "SELECT ts, op, ops, errors, p50_ms, p90_ms, p99_ms FROM op_seconds "
            "WHERE run_id = ? AND ts >= ? AND ts < ? ORDER BY ts, op",
            [run_id, int(lo), int(at)],
        )
        node_rows = _rows(
            con,
            "SELECT ts, host, cpu_pct, mem_pct FROM node_seconds "
            "WHERE run_id = ? AND ts >= ? AND ts < ? ORDER BY ts, host",
            [run_id, int(lo), int(at)],
        )
        error_rows = con.execute(
            "SELECT errors_by_class FROM op_intervals WHERE run_id = ? AND errors > 0 "
            "AND ts >= ? AND ts < ?",
            [run_id, int(lo), int(at)],
        ).fetchall()
        events = _rows(
            con,
            "SELECT ts, kind, message, host, phase FROM events WHERE run_id = ? AND ts <= ? "
            "ORDER BY ts",
            [run_id, at],
        )
        agents = _rows(
            con,
            "SELECT agent, arg_max(host, ts) AS host, arg_max(cpu_pct, ts) AS cpu_pct, "
            "arg_max(ops, ts) AS ops, arg_max(state, ts) AS state, max(ts) AS seen "
            "FROM agent_samples WHERE run_id = ? AND ts < ? GROUP BY agent ORDER BY agent",
            [run_id, at],
        )
        logs = _rows(
            con,
            "SELECT * FROM (SELECT ts, host, stream, text FROM logs WHERE run_id = ? AND ts <= ? "
            "ORDER BY ts DESC LIMIT ?) ORDER BY ts",
            [run_id, at, LOG_LINES],
        )
    ops: dict[str, list[OpPoint]] = defaultdict(list)
    for r in op_rows:
        ops[r["op"]].append(
            OpPoint(int(r["ts"]), int(r["ops"]), int(r["errors"]), r["p50_ms"] or 0.0,
                    r["p90_ms"] or 0.0, r["p99_ms"] or 0.0)
        )
    nodes: dict[str, list[tuple[int, float, float]]] = defaultdict(list)
    for r in node_rows:
        nodes[r["host"]].append((int(r["ts"]), r["cpu_pct"] or 0.0, r["mem_pct"] or 0.0))
    errors: dict[str, int] = defaultdict(int)
    for (raw,) in error_rows:
        for name, count in (json.loads(raw) if raw else {}).items():
            errors[name] += int(count)
    return Snapshot(run, at, first, last, window, phases, dict(ops), dict(nodes),
                    dict(errors), events, agents, logs)
