"""The head of a two-run report: B against A per phase and op (compare.compare_runs' rows,
as `loadtower compare A B` has them) and both runs' latency/throughput curves on one
chart. Figures and escaping are handed in by report_html (one page, one escaping)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from loadtower.store.compare import compare_runs
from loadtower.store.curves import latency_curve
from loadtower.store.report_charts import curve_figure

Tag = Callable[[dict[str, Any], int], str]
Fmt = Callable[..., str]

# (field, header); the verdicts and intervals only where compare's rows have them
COLUMNS = [
    ("phase", "Phase"), ("op", "Op"), ("ops_per_s_a", "Throughput A (ops/s)"),
    ("ops_per_s_b", "Throughput B (ops/s)"), ("ops_change_pct", "Throughput change"),
    ("ops_change_ci_pct", "Throughput change interval"), ("ops_verdict", "Throughput verdict"),
    ("p99_ms_a", "p99 A (ms)"), ("p99_ms_b", "p99 B (ms)"), ("p99_change_pct", "p99 change"),
    ("p99_change_ci_pct", "p99 change interval"), ("p99_verdict", "p99 verdict"),
]  # fmt: skip
TEXT = {"phase", "op", "ops_verdict", "p99_verdict"}


def _value(row: dict[str, Any], field: str, fmt: Fmt) -> str:
    v = row.get(field)
    if v is None:
        return ""
    if isinstance(v, bool):
        return "yes" if v else "no"
    if field.endswith("_ci_pct") and isinstance(v, list | tuple) and len(v) == 2:
        return f"[{v[0]:+.1f}%, {v[1]:+.1f}%]"
    if field.endswith("_change_pct") and isinstance(v, int | float):
        return f"{v:+.1f}%"
    if field.startswith("ops_per_s") and isinstance(v, int | float):
        return f"{v:,.1f}"
    return str(fmt(v, field))


def comparison(store: Path, run_a: str, run_b: str, tag: Tag, fmt: Fmt, label: Fmt) -> str:
    rows = compare_runs(store, run_a, run_b)
    columns = [(f, h) for f, h in COLUMNS if any(f in r for r in rows)]
    if not any(c[0].endswith("_verdict") for c in columns):  # before the verdicts: Welch's
        columns.insert(5, ("significant_ops", "Throughput change significant"))
        columns.append(("significant_p99", "p99 change significant"))
    head = "".join(f"<th{' class=text' if f in TEXT else ''}>{h}</th>" for f, h in columns)
    body = "".join(
        "<tr>" + "".join(f"<td{' class=text' if f in TEXT else ''}>{_value(r, f, fmt)}</td>"
                         for f, _h in columns) + "</tr>"
        for r in rows
    )  # fmt: skip
    table = (f"<div class='box' id='pair'><table class='results'><tr>{head}</tr>{body}</table>"
             "</div>" if rows else "<p>the runs have no phase and op in common</p>")  # fmt: skip
    points = []
    for run, side in ((run_a, "A"), (run_b, "B")):
        points += [{**p, "target": f"{p['target']} ({side})"} for p in latency_curve(store, run)]
    curves = tag(curve_figure(points, None, label), 420) if points else ""
    return f"<h2>B against A</h2>{curves}{table}"
