"""Study 4's table: throughput (ops/s) per workload phase (rows) and engine (columns), from
engine_compare.engine_table's ``total`` rows (a ramp's steps left out). Pure: the CLI
(`loadtower compare RUN`), the report and the TUI print the same cells."""

from __future__ import annotations

from typing import Any

from loadtower.store.engine_text import side_label

TOTAL = "total"  # engine_compare.TOTAL (not imported: this module stays free of duckdb)
SEP = "@"  # ramp_steps.SEP: a ramp step's label


def workload_table(rows: list[dict[str, Any]]) -> tuple[list[str], list[list[str]]]:
    """(headers, rows of cells): ``Workload`` then one ``ENGINE (ops/s)`` column per side;
    ([], []) when the rows have fewer than two sides. A block load's cell also gives its
    rows per second, ``111.1 (11,104.0 rows/s)``: its ops are blocks of rows, where an
    engine that loads a row per op has as many ops as rows."""
    totals = [r for r in rows if r["op"] == TOTAL and SEP not in r["phase"]]
    sides = list(dict.fromkeys(side_label(r) for r in totals))
    if len(sides) < 2:
        return [], []
    cells: dict[str, dict[str, str]] = {}
    for r in totals:
        text = f"{r['ops_per_s']:,.1f}"
        if r.get("rows_per_s") is not None:
            text += f" ({r['rows_per_s']:,.1f} rows/s)"
        cells.setdefault(r["phase"], {})[side_label(r)] = text
    headers = ["Workload", *(f"{side} (ops/s)" for side in sides)]
    return headers, [[phase, *(row.get(side, "") for side in sides)] for phase, row in cells.items()]
