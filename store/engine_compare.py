"""The engines table: per phase and op type, each engine's figures side by side.

Experiment 1's columns (ops/s, median, p90, min) and study 4's (operations, ops/s,
average, min, max, p95, p99 and the return codes: ``OK`` and the errors by class), all
from the same rows.

The sides are the targets of the runs: a run of a scenario with ``[targets.*]`` has
phases named ``TARGET:PHASE``, each recorded with its target and engine; a run of a
single-target scenario is one side named after its engine. Latencies come from the
per-phase HDR histograms (``op_phase``), merged for the ``total`` row, so every figure
is exact to the histograms' resolution (1 us below 2.048 ms, 3 significant digits above).
``min`` is what hdrh's ``get_min_value`` gives for the merged histogram: the lowest
value of the first non-empty bucket; ``avg`` is hdrh's ``get_mean_value`` (each bucket
at its median-equivalent value). Errors by class are summed from the per-second rows
(``op_second.errors_by_class``), the classes the agents counted (e.g. a driver's
network and timeout errors, each under its own name).

``ops_per_s`` is ``phase_rate.py``'s figure: the ops over the phase's measured duration
(every op type of a phase, and its ``total``, over that phase's duration), as in
phase_summary. A ramp's steps (``saturation@40``) are phases of their own here too, on
their ramp's side.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import numpy as np

from loadtower.errors import LoadtowerError
from loadtower.protocol.engine_kinds import default_engine
from loadtower.store import hdr
from loadtower.store.connection import connect
from loadtower.store.engine_text import codes_text as codes_text  # the CLI's and report's
from loadtower.store.phase_rate import measured_duration, ops_per_s
from loadtower.store.ramp_steps import ramp_of

TOTAL = "total"
OP_ORDER = ("read", "insert", "insert_batch", "update", "delete", "delete_batch", "scan")


LOW_VALUES = hdr.LOW_VALUES  # lowest value (us) of each counts index's bucket


def counts_of(blob: bytes | None) -> np.ndarray:
    """Dense counts of one stored histogram (hdrh encoding without base64)."""
    _no, idx, cnt = hdr.decode_many([bytes(blob)] if blob else [], b64=False)
    return np.bincount(idx, weights=cnt, minlength=hdr.COUNTS_LEN).astype(np.int64)


MEDIAN_EQUIVALENT = hdr.LOW_VALUES + ((hdr.HIGH_VALUES - hdr.LOW_VALUES + 1) >> 1)
LATENCY_KEYS = ("avg_ms", "median_ms", "p90_ms", "p95_ms", "p99_ms", "min_ms", "max_ms")


def latency_ms(counts: np.ndarray) -> dict[str, float | None]:
    """avg, median, p90, p95, p99, min and max (ms) of dense counts; None when empty."""
    if not counts.any():
        return dict.fromkeys(LATENCY_KEYS)
    stats = hdr.dense_stats(counts[None, :])[0]
    p95, p99 = hdr.dense_percentiles(counts[None, :], (95.0, 99.0))[0]
    first = int(np.flatnonzero(counts)[0])
    mean_us = float((counts * MEDIAN_EQUIVALENT).sum()) / float(counts.sum())
    return {
        "avg_ms": mean_us / 1000.0,
        "median_ms": float(stats[0]),
        "p90_ms": float(stats[1]),
        "p95_ms": float(p95),
        "p99_ms": float(p99),
        "min_ms": float(LOW_VALUES[first]) / 1000.0,
        "max_ms": float(stats[4]),
    }


def error_classes(con: Any, run_id: str) -> dict[tuple[str, str], dict[str, int]]:
    """(phase, op) -> {error class: count} of one run, from the per-second rows."""
    out: dict[tuple[str, str], dict[str, int]] = {}
    for phase, op, blob in con.execute(
        "SELECT phase, op, errors_by_class FROM op_second WHERE run_id = ? AND errors > 0 "
        "AND errors_by_class IS NOT NULL",
        [run_id],
    ).fetchall():
        classes = out.setdefault((phase, op), {})
        for name, count in (json.loads(blob) or {}).items():
            classes[name] = classes.get(name, 0) + int(count)
    return out


def return_codes(ops: int, errors: int, classes: dict[str, int]) -> dict[str, int]:
    """``{"OK": ops without error, CLASS: count, ...}``, classes by count (most first);
    errors whose class the store lacks are ``unclassified``."""
    codes = {"OK": ops - errors}
    for name, count in sorted(classes.items(), key=lambda kv: (-kv[1], kv[0])):
        codes[name] = count
    missing = errors - sum(classes.values())
    if missing > 0:
        codes["unclassified"] = missing
    return codes


def _scenario_engine(text: str | None) -> str:
    """The engine of a run whose phases do not name theirs (runs stored before phases
    kept their engine): its scenario's ``engine``, else the engine a scenario that names
    none runs (the default engine's kind says so, as for scenarios/models.py)."""
    try:
        named = tomllib.loads(text or "").get("engine")
    except tomllib.TOMLDecodeError:
        return "?"
    return default_engine() if named is None else str(named)


def _sides(con: Any, run_id: str) -> dict[str, tuple[str, str, str]]:
    """phase name -> (side, engine, base phase name) for one run."""
    found = con.execute("SELECT scenario_text FROM runs WHERE id = ?", [run_id]).fetchall()
    if not found:
        raise LoadtowerError(f"no run '{run_id}' in the store (see 'loadtower runs')")
    default_engine = _scenario_engine(found[0][0])
    out: dict[str, tuple[str, str, str]] = {}
    for name, params in con.execute(
        "SELECT name, params FROM phases WHERE run_id = ? ORDER BY idx", [run_id]
    ).fetchall():
        p = json.loads(params) if params else {}
        engine = str(p.get("engine") or default_engine)
        target = p.get("target")
        if target and name.startswith(f"{target}:"):
            out[name] = (str(target), engine, name[len(target) + 1 :])
        else:
            out[name] = (engine, engine, name)
    return out


def _side_of(name: str, sides: dict[str, tuple[str, str, str]]) -> tuple[str, str, str]:
    """A phase's side; a ramp step's (``RAMP@LEVEL``) is its ramp's, named by its step."""
    if name in sides:
        return sides[name]
    ramp = ramp_of(name, sides)
    if ramp is not None:
        side, engine, base = sides[ramp]
        return side, engine, base + name[len(ramp) :]
    return name, "?", name


def has_span_columns(con: Any) -> bool:
    """Schema 4 and later: op_phase keeps each phase's measured span."""
    found = con.execute(
        "SELECT count(*) FROM duckdb_columns() WHERE table_name = 'op_phase' "
        "AND column_name IN ('first_start', 'last_done')"
    ).fetchall()
    return int(found[0][0]) == 2


def phase_durations(con: Any, run_id: str) -> dict[str, float | None]:
    """phase name -> its measured duration (phase_rate.measured_duration) in one run."""
    span = "min(first_start), max(last_done)" if has_span_columns(con) else "NULL, NULL"
    rows = con.execute(
        f"SELECT phase, {span}, min(first_ts), max(last_ts) FROM op_phase WHERE run_id = ? "
        "GROUP BY phase",
        [run_id],
    ).fetchall()
    clocks = {
        name: (started, ended)
        for name, started, ended in con.execute(
            "SELECT name, min(started), max(ended) FROM phases WHERE run_id = ? GROUP BY name",
            [run_id],
        ).fetchall()
    }
    return {
        phase: measured_duration(first, last, clocks.get(phase), (first_ts, last_ts))
        for phase, first, last, first_ts, last_ts in rows
    }


def block_rows(con: Any, run_id: str) -> dict[str, int]:
    """phase name -> the rows its load wrote, for a load whose op wrote several rows (a
    block load's insert: a pipeline, insert_many or batch of N rows; the load phase's
    result `rows`, phases/load.py); other phases are not in it."""
    out: dict[str, int] = {}
    for name, result in con.execute(
        "SELECT name, result FROM phases WHERE run_id = ?", [run_id]
    ).fetchall():
        found = json.loads(result) if result else {}
        if isinstance(found, dict) and (found.get("rows_per_op") or 1) > 1:
            out[name] = int(found.get("rows") or 0)
    return out


def _op_key(op: str) -> tuple[int, str]:
    if op == TOTAL:
        return (len(OP_ORDER) + 1, op)
    return (OP_ORDER.index(op), op) if op in OP_ORDER else (len(OP_ORDER), op)


def engine_table(
    store_path: Path | str,
    run_ids: list[str],
    phase: str | None = None,
    kind: str = "response",
) -> list[dict[str, Any]]:
    """One row per (phase, op type, side), plus a ``total`` row per (phase, side).

    Sides are the runs' targets; when two runs have a side of the same name, the run id
    is added to tell them apart. ``kind`` is ``response`` (from the intended start, the
    store's default) or ``service`` (from the actual send)."""
    if kind not in ("response", "service"):
        raise LoadtowerError(f"latency kind must be 'response' or 'service', not '{kind}'")
    column = f"{kind}_hist"
    groups: dict[tuple[str, str, str], dict[str, Any]] = {}
    phase_order: list[str] = []
    side_order: list[str] = []
    with connect(Path(store_path), read_only=True) as con:
        sides = {run: _sides(con, run) for run in run_ids}
        side_sets = {run: {s[0] for s in sides[run].values()} for run in run_ids}
        for run in run_ids:
            durations = phase_durations(con, run)
            rows_of = block_rows(con, run)
            classes_of = error_classes(con, run)
            rows = con.execute(
                f"SELECT phase, op, ops, errors, {column} FROM op_phase "
                "WHERE run_id = ? ORDER BY first_ts, op",
                [run],
            ).fetchall()
            for name, op, ops, errors, blob in rows:
                side, engine, base = _side_of(name, sides[run])
                if any(side in side_sets[other] for other in run_ids if other != run):
                    side = f"{side} ({run})"  # e.g. two runs of one engine side by side
                if phase is not None and base != phase and not base.startswith(f"{phase}@"):
                    continue
                if base not in phase_order:
                    phase_order.append(base)
                if side not in side_order:
                    side_order.append(side)
                counts = counts_of(blob)
                for key_op in (op, TOTAL):
                    g = groups.setdefault(
                        (base, key_op, side),
                        {
                            "run_id": run,
                            "engine": engine,
                            "ops": 0,
                            "errors": 0,
                            "phases": set(),
                            "duration_s": 0.0,
                            "counts": np.zeros(hdr.COUNTS_LEN, np.int64),
                            "classes": {},
                        },
                    )
                    g["ops"] += int(ops)
                    g["errors"] += int(errors)
                    for cls, count in classes_of.get((name, op), {}).items():
                        g["classes"][cls] = g["classes"].get(cls, 0) + count
                    if (run, name) not in g["phases"]:  # a phase's duration counts once
                        g["phases"].add((run, name))
                        g["duration_s"] += durations.get(name) or 0.0
                        if name in rows_of and key_op == TOTAL:
                            g["rows"] = g.get("rows", 0) + rows_of[name]
                    g["counts"] += counts
    if phase is not None and not phase_order:
        raise LoadtowerError(f"no phase '{phase}' with ops in run(s) {', '.join(run_ids)}")
    out = []
    for (base, op, side), g in sorted(
        groups.items(),
        key=lambda kv: (
            phase_order.index(kv[0][0]),
            _op_key(kv[0][1]),
            side_order.index(kv[0][2]),
        ),
    ):
        out.append(
            {
                "phase": base,
                "op": op,
                "target": side,
                "engine": g["engine"],
                "run_id": g["run_id"],
                "ops": g["ops"],
                "ops_per_s": ops_per_s(g["ops"], g["duration_s"]),
                "duration_s": round(g["duration_s"], 3),
                **latency_ms(g["counts"]),
                "errors": g["errors"],
                "return_codes": return_codes(g["ops"], g["errors"], g["classes"]),
                # a block load's rows (its ops are blocks): what a one-row insert's ops
                # per second are to an engine that loads a row per op
                **({"rows": g["rows"], "rows_per_s": ops_per_s(g["rows"], g["duration_s"])}
                   if "rows" in g else {}),
            }
        )
    return out


def run_sides(store_path: Path | str, run_id: str) -> list[tuple[str, str]]:
    """(side, engine) of a run's phases, in order (one per target)."""
    with connect(Path(store_path), read_only=True) as con:
        seen: dict[str, str] = {}
        for side, engine, _base in _sides(con, run_id).values():
            seen.setdefault(side, engine)
    return list(seen.items())
