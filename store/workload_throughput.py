"""Study 4's table: throughput (ops/s) per workload phase (rows) and engine (columns), from
engine_compare.engine_table's ``total`` rows (a ramp's steps left out). Pure: the CLI
(`loadtower compare RUN`), the report and the TUI print the same cells.

A block load (a pipeline, an insert of many documents, a batch of rows) counts one
op per block of rows, where an engine that loads a row per op counts one per row: a load
phase with a block load on one side compares rows per second (`phase_unit`, `rate_of`),
the block load's the ``rows_per_s`` engine_table gives, a row-per-op side's its ops/s."""

from __future__ import annotations

from typing import Any

from loadtower.store.engine_text import side_label, throughput_text

TOTAL = "total"  # engine_compare.TOTAL (not imported: this module stays free of duckdb)
SEP = "@"  # ramp_steps.SEP: a ramp step's label
OPS = "ops/s"
ROWS = "rows/s"


def workload_totals(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """engine_table's ``total`` row of every workload phase, a ramp's steps left out:
    study 4's rows, the report's headlines and its workload chart."""
    return [r for r in rows if r["op"] == TOTAL and SEP not in r["phase"]]


def phase_unit(rows: list[dict[str, Any]]) -> str:
    """How one phase's total rows (one per side) compare: ``rows/s`` when a side loads
    blocks of rows (its ops are blocks, the others' ops rows), else ``ops/s``."""
    return ROWS if any(r.get("rows_per_s") is not None for r in rows) else OPS


def rate_of(row: dict[str, Any], unit: str) -> float:
    """A total row's rate in `unit`: in rows/s, a block load's ``rows_per_s`` (engine_table's
    figure) and a row-per-op side's ops/s (one row an op); in ops/s, its ops/s."""
    rows_per_s = row.get("rows_per_s")
    if unit == ROWS and rows_per_s is not None:
        return float(rows_per_s)
    return float(row["ops_per_s"])


def workload_table(rows: list[dict[str, Any]]) -> tuple[list[str], list[list[str]]]:
    """(headers, rows of cells): ``Workload`` then one ``ENGINE (ops/s)`` column per side;
    ([], []) when the rows have fewer than two sides. A block load's cell also gives its
    rows per second, ``111.1 (11,104.0 rows/s)``: its ops are blocks of rows, where an
    engine that loads a row per op has as many ops as rows."""
    totals = workload_totals(rows)
    sides = list(dict.fromkeys(side_label(r) for r in totals))
    if len(sides) < 2:
        return [], []
    cells: dict[str, dict[str, str]] = {}
    for r in totals:
        cells.setdefault(r["phase"], {})[side_label(r)] = throughput_text(r)
    headers = ["Workload", *(f"{side} (ops/s)" for side in sides)]
    return headers, [[phase, *(row.get(side, "") for side in sides)] for phase, row in cells.items()]
