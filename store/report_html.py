"""The self-contained HTML report of one run: charts per phase, the result table (rates
from phase_summary: ``phase_rate.py``'s figure) and one row per step of each ramp."""

from __future__ import annotations

import time
from collections import defaultdict
from html import escape
from pathlib import Path
from typing import Any

from loadtower.store.reader import StoreReader
from loadtower.store.svg import line_chart

CSS = """body{font-family:system-ui,sans-serif;margin:24px;color:#222}
table.results{border-collapse:collapse;margin:12px 0}
table.results td,table.results th{border:1px solid #ccc;padding:3px 8px;text-align:right}
table.results th{background:#f4f4f4}.chart{display:block;margin:8px 0}"""
COLUMNS = ["phase", "op", "ops", "duration_s", "ops_per_s", "p50_ms", "p90_ms", "p99_ms", "max_ms"]
COLUMNS += ["errors"]
# Cassandra's tombstones scanned per read of the table each phase read (table_reads.py)
TOMBSTONE_COLUMNS = ["tombstones_table", "tombstones_p50", "tombstones_p99", "tombstones_max"]
# the engines table of a run with several targets (engine_compare.engine_table, as
# `loadtower compare RUN` prints it): study 4's figures per workload and engine
ENGINE_COLUMNS = ["phase", "op", "engine", "ops", "ops_per_s", "avg_ms", "min_ms", "max_ms"]
ENGINE_COLUMNS += ["p95_ms", "p99_ms", "return_codes"]
STEP_COLUMNS = ["ramp", "label", "asked", "unit", "ops", "duration_s", "achieved_ops_per_s"]
STEP_COLUMNS += ["p50_ms", "p90_ms", "p99_ms", "errors", "passed", "why"]


def _fmt(v: object, column: str = "") -> str:
    if v is None:
        return ""
    if isinstance(v, float) and column.endswith("ops_per_s"):
        return f"{v:,.1f}"  # phase_rate.DECIMALS: as the event, the CLI and compare show it
    return f"{v:,.2f}" if isinstance(v, float) else escape(str(v))


def _table(rows: list[dict[str, Any]], columns: list[str]) -> str:
    head = "".join(f"<th>{c}</th>" for c in columns)
    body = "".join(
        "<tr>" + "".join(f"<td>{_fmt(r.get(c), c)}</td>" for c in columns) + "</tr>" for r in rows
    )
    return f"<table class='results'><tr>{head}</tr>{body}</table>"


def _columns(summary: list[dict[str, Any]]) -> list[str]:
    """The result table's columns: the tombstones' only where Cassandra's were sampled."""
    if any(r.get("tombstones_p99") is not None for r in summary):
        return COLUMNS + TOMBSTONE_COLUMNS
    return COLUMNS


def _series(rows: list[dict[str, Any]], key: str, value: str, t0: float) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = defaultdict(list[Any])
    for r in rows:
        out[str(r[key])].append((r["ts"] - t0, r[value]))
    return dict(out)


def _engines(store: Path, run_id: str) -> str:
    """The engines table for a run of several targets (e.g. ycsb-suite), else ""."""
    from loadtower.store.engine_compare import codes_text, engine_table, run_sides

    if len(run_sides(store, run_id)) < 2:
        return ""
    rows = [
        {**r, "engine": r["target"], "return_codes": codes_text(r["return_codes"])}
        for r in engine_table(store, [run_id])
    ]
    return f"<h2>Engines (response time, ms)</h2>{_table(rows, ENGINE_COLUMNS)}"


def history_note(store: Path, run_id: str) -> str | None:
    """'this run sits after a change point at run X (p99 +N%)' when the run's scenario
    history (store/history.py) has a change point at or before it, else None."""
    from loadtower.store.history import change_point_sentence

    return change_point_sentence(store, run_id)


def render(reader: StoreReader, run_id: str) -> str:
    run = reader.run(run_id)
    phases = reader.phases(run_id)
    ops = reader.op_seconds(run_id)
    nodes = reader.node_seconds(run_id)
    summary = reader.phase_summary(run_id)
    times = [r["ts"] for r in ops] + [r["ts"] for r in nodes]
    t0 = min(times) if times else 0.0
    bands = [(p["started"] - t0, (p["ended"] or p["started"]) - t0, p["name"]) for p in phases
             if p["started"] is not None]  # fmt: skip
    charts = [
        line_chart("Throughput per op", _series(ops, "op", "ops", t0), "ops/s", bands),
        line_chart("p50 latency per op", _series(ops, "op", "p50_ms", t0), "ms", bands),
        line_chart("p99 latency per op", _series(ops, "op", "p99_ms", t0), "ms", bands),
        line_chart("Node CPU", _series(nodes, "host", "cpu_pct", t0), "%", bands),
        line_chart("Node RAM used", _series(nodes, "host", "mem_pct", t0), "%", bands),
    ]
    steps = reader.ramp_steps(run_id)
    ramp = f"<h2>Ramp steps</h2>{_table(steps, STEP_COLUMNS)}" if steps else ""
    engines = _engines(reader.path, run_id)
    phase_rows = "".join(
        f"<li>{escape(p['name'])} ({escape(p['type'] or '')}): "
        f"{_fmt((p['ended'] or p['started']) - p['started'])} s</li>"
        for p in phases
        if p["started"] is not None
    )
    started = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(run["started"] or 0))
    return (
        f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>loadtower run {escape(run_id)}"
        f"</title><style>{CSS}</style></head><body><h1>Run {escape(run_id)}: "
        f"{escape(run['name'] or '')}</h1><p>scenario {escape(run['scenario'] or '')}, "
        f"started {started}, status <b>{escape(run['status'] or '')}</b>"
        f"{': ' + escape(run['reason']) if run['reason'] else ''}</p><ul>{phase_rows}</ul>"
        f"{f'<p><b>{escape(n)}</b></p>' if (n := history_note(reader.path, run_id)) else ''}"
        f"<h2>Results per phase and op</h2>{_table(summary, _columns(summary))}{engines}{ramp}"
        f"<h2>Charts</h2>{''.join(charts)}</body></html>"
    )


def write_report(store: Path, run_id: str, out: Path) -> None:
    html = render(StoreReader(store), run_id)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(html, encoding="utf-8")
