"""The runs of one scenario in time order, one figure each, and the change points in them.

A run's figure is the one phase_summary shows (``StoreReader.phase_summary`` for one op,
``StoreReader.phase_totals`` for every op of the phase merged), so history, compare,
the report and the TUI print the same number for the same run. Runs whose settings (the
scenario as it ran, after ``--set`` and ``--scale``, and the inventory) differ from the
most common ones are marked. Change points come from ``change_points.py``.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from loadtower.errors import LoadtowerError
from loadtower.store.change_points import MAX_P_VALUE, MIN_CHANGE_PCT, change_points
from loadtower.store.connection import connect
from loadtower.store.history_metrics import METRICS, direction
from loadtower.store.reader import StoreReader


@dataclass
class HistoryRun:
    index: int  # 1-based place in the history
    id: str
    name: str
    started: float | None
    status: str
    settings: str  # a short digest of the settings; equal digests ran the same settings
    differs: bool  # its settings differ from the most common ones
    value: float | None  # None: the run has no such phase or op


@dataclass
class HistoryChange:
    run_id: str  # the first run of the new level
    index: int  # its place in the history (1-based)
    before: float
    after: float
    change_pct: float
    direction: str  # regression | improvement
    p_value: float


@dataclass
class History:
    scenario: str
    metric: str
    unit: str
    phase: str
    op: str | None
    runs: list[HistoryRun] = field(default_factory=list)
    change_points: list[HistoryChange] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _settings(reader: StoreReader, run: dict[str, Any]) -> str:
    """A digest of what the run ran: the scenario as validated (stored in ``extra`` since
    the run history exists), else its text and its phases' parameters; and the inventory."""
    extra = run.get("extra") if isinstance(run.get("extra"), dict) else {}
    scenario: Any = (extra or {}).get("settings")
    if scenario is None:
        phases = [(p["name"], p["type"], p["params"]) for p in reader.phases(run["id"])]
        scenario = [run.get("scenario_text"), phases]
    text = json.dumps([scenario, run.get("inventory_text")], sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:8]


def _run_rows(reader: StoreReader, run_ids: list[str]) -> list[dict[str, Any]]:
    """The runs' rows (with ``extra`` parsed), in the order of `run_ids`, in one read."""
    if not run_ids:
        return []
    with connect(reader.path, read_only=True, wait_s=reader.wait_s) as con:
        cur = con.execute(
            "SELECT id, name, started, status, extra, scenario_text, inventory_text FROM runs "
            f"WHERE id IN ({', '.join('?' * len(run_ids))})", run_ids)
        names = [d[0] for d in cur.description or []]
        rows = {row[0]: dict(zip(names, row, strict=True)) for row in cur.fetchall()}
    for row in rows.values():
        row["extra"] = json.loads(row["extra"]) if isinstance(row["extra"], str) else {}
    return [rows[run_id] for run_id in run_ids]


def _most_common(digests: list[str]) -> str:
    """The settings most runs ran (a tie: those of the latest of the tied)."""
    counts = Counter(digests)
    last = {digest: i for i, digest in enumerate(digests)}
    return max(last, key=lambda d: (counts[d], last[d]), default="")


def _default_phase(reader: StoreReader, run_id: str) -> str | None:
    """The run's first phase of type run (else ramp, else the first with ops)."""
    phases = reader.phases(run_id)
    for kind in ("run", "ramp"):
        for phase in phases:
            if phase["type"] == kind:
                return str(phase["name"])
    totals = reader.phase_totals(run_id)
    return next(iter(totals), None)


def _figure(reader: StoreReader, run_id: str, phase: str, op: str | None, key: str
            ) -> float | None:  # fmt: skip
    if op is None:
        row = reader.phase_totals(run_id).get(phase)
    else:
        row = next(
            (r for r in reader.phase_summary(run_id) if r["phase"] == phase and r["op"] == op),
            None,
        )
    if row is None:
        return None
    if key == "error_rate":
        return float(row["errors"]) / row["ops"] if row["ops"] else None
    value = row.get(key)
    return None if value is None else float(value)


def scenario_runs(reader: StoreReader, scenario: str) -> list[dict[str, Any]]:
    """The completed runs of `scenario`, oldest first (a failed or interrupted run's
    figures are partial: not part of a history)."""
    runs = [r for r in reader.runs() if r["scenario"] == scenario]
    if not runs:
        known = sorted({str(r["scenario"]) for r in reader.runs() if r["scenario"]})
        raise LoadtowerError(
            f"no runs of scenario '{scenario}' in {reader.path}"
            + (f" (scenarios: {', '.join(known)})" if known else "")
        )
    return [r for r in runs if r["status"] == "completed"]


def run_history(
    store: Path | str,
    scenario: str,
    metric: str = "p99",
    op: str | None = None,
    phase: str | None = None,
    same_settings: bool = False,
    max_p_value: float = MAX_P_VALUE,
    min_change_pct: float = MIN_CHANGE_PCT,
) -> History:
    """The completed runs of `scenario` in time order with `metric` of `phase` (default:
    the latest run's first run phase) and `op` (default: every op merged), and the change
    points of that series (runs without the figure are listed and skipped)."""
    if metric not in METRICS:
        raise LoadtowerError(f"unknown metric '{metric}' (one of: {', '.join(METRICS)})")
    key, unit = METRICS[metric]
    reader = StoreReader(store)
    runs = scenario_runs(reader, scenario)
    if phase is None and runs:
        phase = _default_phase(reader, runs[-1]["id"])
    full = _run_rows(reader, [r["id"] for r in runs])
    digests = [_settings(reader, r) for r in full]
    common = _most_common(digests)
    history = History(scenario, metric, unit, phase or "", op)
    for run, digest in zip(full, digests, strict=True):
        if same_settings and digest != common:
            continue
        value = _figure(reader, run["id"], phase, op, key) if phase else None
        history.runs.append(
            HistoryRun(len(history.runs) + 1, str(run["id"]), str(run["name"] or ""),
                       run["started"], str(run["status"]), digest, digest != common, value)
        )  # fmt: skip
    if phase is not None and runs and not any(r.value is not None for r in history.runs):
        have = sorted({p["name"] for r in runs for p in reader.phases(r["id"])})
        raise LoadtowerError(
            f"no run of scenario '{scenario}' has {metric} for phase '{phase}'"
            + (f" and op '{op}'" if op else "") + f" (phases: {', '.join(have)})"
        )
    measured = [r for r in history.runs if r.value is not None]
    values = [r.value for r in measured if r.value is not None]
    found = change_points(values, max_p_value, min_change_pct)
    for point in found:
        first = measured[point.index]
        history.change_points.append(
            HistoryChange(first.id, first.index, point.before, point.after, point.change_pct,
                          direction(metric, point.change_pct), point.p_value)
        )  # fmt: skip
    return history


def change_point_sentence(store: Path | str, run_id: str, metric: str = "p99") -> str | None:
    """'this run sits after a change point at run X (p99 +N%)' for the last change point
    of its scenario's history at or before the run, or None (no history, no change)."""
    reader = StoreReader(store)
    run = reader.run(run_id)
    if run["status"] != "completed" or not run.get("scenario"):
        return None
    try:
        history = run_history(store, str(run["scenario"]), metric)
    except LoadtowerError:
        return None
    place = next((r.index for r in history.runs if r.id == run_id), None)
    if place is None:
        return None
    before = [c for c in history.change_points if c.index <= place]
    if not before:
        return None
    last = before[-1]
    return (f"this run sits after a change point at run {last.run_id} "
            f"({metric} {last.change_pct:+.0f}%)")  # fmt: skip
