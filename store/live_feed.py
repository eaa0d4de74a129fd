"""What the dashboard shows, as immutable snapshots read from the store.

Live and replay use the same function: a snapshot of run R at cursor time T over a
window W. Live moves T with the newest stored second; replay moves it with the
playback clock. The store is opened read-only, so a run being written by a
headless `loadtower run` can be watched while it runs.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loadtower.errors import LoadtowerError
from loadtower.store.connection import connect
from loadtower.store.read_errors import read_errors

LOG_LINES = 200
EVENT_LINES = 500
AGENT_LOOKBACK_S = 600  # agents silent for longer leave the agents table
PLAIN_EVENTS = ("run", "phase_start", "phase_end")  # not jump targets ([ and ] use phases)
TIMELINE_QUIET = ("run", "phase_end")  # not drawn on the timeline bar
STEER_EVENTS = {"rate_change": "rate", "users_change": "users"}  # the operator's changes
WINDOWS = (60, 300, 900, 0)  # seconds; 0 = the whole run


@dataclass(frozen=True)
class OpPoint:
    ts: int
    ops: int
    errors: int
    p50_ms: float
    p90_ms: float
    p99_ms: float
    phase: str = ""  # the phase label of the second (a ramp's step: "saturation@40")


@dataclass(frozen=True)
class PhaseRow:
    """A row of the run's phases table: when the phase started and ended (None: not
    yet)."""

    idx: int
    name: str
    type: str
    started: float | None
    ended: float | None
    # the phase's planned length (s) as the orchestrator stored it, and whether it is
    # exact (False: a floor, e.g. a scale-out's fixed waits); None: not known (a load)
    planned: float | None = None
    planned_exact: bool = True
    # a run phase's steerable load: ("rate", total ops/s) for an open model, ("users", n)
    # for a closed one, as last set (its params, or the operator's last change); else None
    steer: tuple[str, float] | None = None
    # how many times the operator changed it so far (stored rate_change / users_change
    # events): the TUI tells by it whether the store has each change it asked for, which
    # the level alone cannot tell when a change goes back to an earlier level
    steers: int = 0


@dataclass(frozen=True)
class Stretch:
    """Where a phase label has data: [first, end) over the whole run. A ramp stores one
    label per step, so its steps are stretches of their own; such labels need not be in
    the phases table."""

    label: str
    first: float
    end: float


@dataclass(frozen=True)
class Snapshot:
    run: dict[str, Any]
    cursor: float
    first_ts: float
    last_ts: float
    window: int
    phases: list[PhaseRow]
    ops: dict[str, list[OpPoint]] = field(default_factory=dict)
    nodes: dict[str, list[tuple[int, float, float]]] = field(default_factory=dict)
    errors_by_class: dict[str, int] = field(default_factory=dict)
    events: list[dict[str, Any]] = field(default_factory=list)
    agents: list[dict[str, Any]] = field(default_factory=list)
    logs: list[dict[str, Any]] = field(default_factory=list)
    marks: list[float] = field(default_factory=list)  # notable events of the whole run
    markers: list[tuple[float, str]] = field(default_factory=list)  # (ts, kind), whole run
    stretches: list[Stretch] = field(default_factory=list)  # labels with data, in time order
    summary: list[dict[str, Any]] = field(default_factory=list)  # phase_summary (ended runs)

    @property
    def x_range(self) -> tuple[float, float]:
        lo = self.first_ts if self.window == 0 else self.cursor - self.window
        return lo, self.cursor

    def phase_at(self, ts: float) -> str:
        current = ""
        for phase in self.phases:
            if phase.started is not None and phase.started <= ts:
                current = phase.name
        return current

    def steerable(self) -> PhaseRow | None:
        """The newest started phase when it has not ended and its load can be steered
        (a run phase: its ``steer`` says how), else None."""
        row = next((p for p in reversed(self.phases) if p.started is not None), None)
        return row if row is not None and row.ended is None and row.steer is not None \
            else None

    def step_at(self, ts: float) -> str:
        """The label of the data at `ts` when it is not a phase's name (a ramp's step,
        "saturation@40"), else ""."""
        names = {p.name for p in self.phases}
        current = ""
        for stretch in self.stretches:
            if stretch.first <= ts < stretch.end + 1 and stretch.label not in names:
                current = stretch.label
        return current

    def last_label(self) -> str:
        """The phase label of the newest second with data (a step's, or a phase's)."""
        newest = max((p[-1] for p in self.ops.values() if p), key=lambda p: p.ts, default=None)
        return newest.phase if newest is not None else ""

    def phase_figures(self, label: str) -> tuple[float, float, int] | None:
        """ops/s, worst p99 and errors of one phase label as the store's phase_summary has
        them (ops/s summed over its ops); None when the summary has no such label."""
        rows = [r for r in self.summary if r["phase"] == label]
        if not rows:
            return None
        return (float(sum(r["ops_per_s"] or 0 for r in rows)),
                max(float(r["p99_ms"] or 0) for r in rows),
                int(sum(r["errors"] or 0 for r in rows)))

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


def store_version(store: Path) -> tuple[int, ...]:
    """Changes whenever a writer commits to the store (file and WAL size and time): a
    live dashboard asks the store again only then, not on every tick."""
    found: list[int] = []
    for path in (Path(store), Path(f"{store}.wal")):
        try:
            st = path.stat()
            found += [st.st_mtime_ns, st.st_size]
        except OSError:
            found += [0, 0]
    return tuple(found)


def _bounds(con: Any, run_id: str) -> tuple[dict[str, Any], float, float]:
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


def run_bounds(store: Path, run_id: str) -> tuple[dict[str, Any], float, float]:
    """The run's row and its first and last stored second (for live and seeking).
    KeyError when the run is not in the store."""
    with read_errors(store), connect(store, read_only=True) as con:
        return _bounds(con, run_id)


def _object(text: str | None) -> dict[str, Any]:
    """A JSON column's object ({} when it is not JSON, or not an object)."""
    try:
        found = json.loads(text or "{}")
    except ValueError:
        return {}
    return found if isinstance(found, dict) else {}


def _number(value: object) -> float | None:
    """`value` when it is a finite number above 0 (not a bool), else None."""
    if isinstance(value, int | float) and not isinstance(value, bool) \
            and math.isfinite(value) and value > 0:
        return float(value)
    return None


def _planned(stored: dict[str, Any]) -> tuple[float | None, bool]:
    """The planned length a phase row's params carry (``planned_s``, ``planned_exact``)."""
    planned = _number(stored.get("planned_s"))
    if planned is None:  # no plan shown
        return None, True
    return planned, bool(stored.get("planned_exact", True))


def _model(kind: str, stored: dict[str, Any]) -> tuple[str, float] | None:
    """A run phase's load model as its params store it: ("rate", ops/s) or ("users", n)."""
    if kind != "run":
        return None
    rate, users = _number(stored.get("rate")), _number(stored.get("users"))
    return ("rate", rate) if rate is not None else ("users", users) if users is not None \
        else None


def _steered(rows: list[tuple[Any, ...]]) -> dict[str, tuple[tuple[str, float], int]]:
    """Each phase label's level as its last rate_change / users_change event set it,
    and how many such events it has."""
    found: dict[str, tuple[tuple[str, float], int]] = {}
    for phase, kind, data in rows:
        to = _number(_object(data).get("to"))
        if to is not None and phase is not None:
            count = found[str(phase)][1] if str(phase) in found else 0
            found[str(phase)] = ((STEER_EVENTS[kind], to), count + 1)
    return found


def _phase_rows(con: Any, run_id: str, until: float) -> list[PhaseRow]:
    """The run's phases, a run phase with its load's level at `until`."""
    steered = _steered(con.execute(
        "SELECT phase, kind, data FROM events WHERE run_id = ? AND kind IN ? AND ts <= ? "
        "ORDER BY ts, rowid", [run_id, list(STEER_EVENTS), until]).fetchall())
    rows = []
    for idx, name, kind, started, ended, params in con.execute(
            "SELECT idx, name, type, started, ended, params FROM phases WHERE run_id = ? "
            "ORDER BY idx", [run_id]).fetchall():
        stored = _object(params)
        model = _model(str(kind), stored)
        level, count = steered.get(str(name), (None, 0))
        if model is not None and level is not None and level[0] == model[0]:
            model = level
        rows.append(PhaseRow(int(idx), str(name), str(kind),
                             None if started is None else float(started),
                             None if ended is None else float(ended), *_planned(stored),
                             steer=model, steers=count))
    return rows


def snapshot(store: Path, run_id: str, cursor: float | None, window: int) -> Snapshot:
    """The run as it was at `cursor` (None: the newest stored second). One short-lived
    read-only connection, so a writer in another process is held up only briefly.
    KeyError when the run is not in the store; StoreReadError when it cannot be read."""
    with read_errors(store), connect(store, read_only=True) as con:
        run, first, last = _bounds(con, run_id)
        at = last if cursor is None else min(max(cursor, first), last)
        lo = first if window == 0 else at - window
        span = [run_id, int(lo), int(at)]
        # live (no cursor): every change so far, one stored after the newest second too
        phases = _phase_rows(con, run_id, math.inf if cursor is None else at)
        op_rows = con.execute(
            "SELECT ts, op, ops, errors, p50_ms, p90_ms, p99_ms, phase FROM op_seconds "
            "WHERE run_id = ? AND ts >= ? AND ts < ? ORDER BY op, ts",
            span,
        ).fetchall()
        node_rows = con.execute(
            "SELECT host, ts, cpu_pct, mem_pct FROM node_seconds "
            "WHERE run_id = ? AND ts >= ? AND ts < ? ORDER BY host, ts",
            span,
        ).fetchall()
        error_rows = con.execute(
            "SELECT errors_by_class FROM op_intervals WHERE run_id = ? AND errors > 0 "
            "AND ts >= ? AND ts < ?",
            span,
        ).fetchall()
        events = _rows(
            con,
            "SELECT ts, kind, message, host, phase FROM (SELECT rowid AS n, * FROM events "
            "WHERE run_id = ? AND ts <= ? ORDER BY ts DESC, n DESC LIMIT ?) ORDER BY ts, n",
            [run_id, at, EVENT_LINES],
        )
        agents = _rows(
            con,
            "SELECT agent, arg_max(host, ts) AS host, arg_max(cpu_pct, ts) AS cpu_pct, "
            "arg_max(ops, ts) AS ops, arg_max(state, ts) AS state, max(ts) AS seen "
            "FROM agent_samples WHERE run_id = ? AND ts >= ? AND ts < ? "
            "GROUP BY agent ORDER BY agent",
            [run_id, at - AGENT_LOOKBACK_S, at],
        )
        markers = [(float(ts), kind) for ts, kind in con.execute(
            "SELECT DISTINCT ts, kind FROM events WHERE run_id = ? AND kind NOT IN ? "
            "ORDER BY ts, kind",
            [run_id, list(TIMELINE_QUIET)],
        ).fetchall()]
        marks = {ts for ts, kind in markers if kind not in PLAIN_EVENTS}
        stretches = [Stretch(str(label), float(first), float(last) + 1) for label, first, last
                     in con.execute(
            "SELECT phase, min(first_ts), max(last_ts) FROM op_phase WHERE run_id = ? "
            "GROUP BY phase ORDER BY min(first_ts), phase", [run_id]).fetchall()
                     if first is not None]
        logs = _rows(
            con,
            "SELECT ts, host, stream, text FROM (SELECT rowid AS n, * FROM logs WHERE run_id = ? "
            "AND ts <= ? ORDER BY ts DESC, n DESC LIMIT ?) ORDER BY ts, n",  # ties: as written
            [run_id, at, LOG_LINES],
        )
    summary = _phase_summary(store, run_id) if run.get("status") != "running" else []
    ops: dict[str, list[OpPoint]] = defaultdict(list)
    for ts, op, n, errs, p50, p90, p99, label in op_rows:
        ops[op].append(OpPoint(int(ts), int(n), int(errs), p50 or 0.0, p90 or 0.0, p99 or 0.0,
                               str(label or "")))
    nodes: dict[str, list[tuple[int, float, float]]] = defaultdict(list)
    for host, ts, cpu, mem in node_rows:
        nodes[host].append((int(ts), cpu or 0.0, mem or 0.0))
    errors: dict[str, int] = defaultdict(int)
    for (raw,) in error_rows:
        for name, count in (json.loads(raw) if raw else {}).items():
            errors[name] += int(count)
    return Snapshot(run, at, first, last, window, phases, dict(ops), dict(nodes),
                    dict(errors), events, agents, logs, sorted(marks), markers, stretches,
                    summary)


_SUMMARIES: dict[tuple[str, str], tuple[tuple[int, ...], list[dict[str, Any]]]] = {}
SUMMARIES_KEPT = 8


def _phase_summary(store: Path, run_id: str) -> list[dict[str, Any]]:
    """The store's figures per phase label of an ended run (StoreReader.phase_summary:
    the same ops/s as every report), with a ramp's steps as labels of their own. Read
    again only when a writer has committed to the store since (a replay asks 4 times a
    second; the reader's own connection would cost each snapshot about 15 ms)."""
    # deferred: the reader loads pyarrow and numpy; the live feed needs only duckdb
    from loadtower.store.reader import StoreReader

    key, version = (str(store), run_id), store_version(store)
    kept = _SUMMARIES.get(key)
    if kept is not None and kept[0] == version:
        return kept[1]
    try:
        rows = StoreReader(store).phase_summary(run_id)
    except LoadtowerError:  # deleted meanwhile: the snapshot says so on its next read
        return []
    if len(_SUMMARIES) >= SUMMARIES_KEPT:
        _SUMMARIES.pop(next(iter(_SUMMARIES)), None)
    _SUMMARIES[key] = (version, rows)
    return rows
