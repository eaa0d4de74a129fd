"""A block load's rows in study 4's table: an engine that loads blocks of rows (a
pipeline, insert_many, a batch) counts one op per block, one that loads a row per op one
op per row, so the load's cell gives the block load's rows per second beside its ops per
second, the same figure its load phase's result gives (phases/load.py: ``rows_per_s``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from loadtower.store import StoreWriter
from loadtower.store.engine_compare import engine_table
from loadtower.store.phase_rate import ops_per_s
from loadtower.store.workload_throughput import workload_table
from tests.store.synth import T0, hist

# per side: (engine, ops each second, the load phase's result)
SIDES = {
    "rows": ("cassandra", [600, 400], {}),
    "blocks": ("redis", [12, 8], {"rows_per_op": 100, "rows": 2000}),
}


def _line(ts: int, phase: str, ops: int) -> dict:
    return {
        "type": "interval", "agent": "agent1/0", "host": "agent1", "ts": ts, "phase": phase,
        "cpu_pct": 5.0,
        "ops": {"insert": {"ops": ops, "errors": {}, "late": 0,
                           "service_hist": hist([900] * ops), "response_hist": hist([900] * ops)}},
    }


@pytest.fixture
def store(tmp_path: Path) -> tuple[Path, str]:
    path = tmp_path / "s.duckdb"
    with StoreWriter(path) as writer:
        run = writer.start_run("x", "ycsb-suite", 'engine = "cassandra"\n', "", {}, {}, {})
        for number, (side, (engine, seconds, result)) in enumerate(SIDES.items()):
            name = f"{side}:load"
            start = T0 + number * 100
            writer.phase_started(run, number, name, "load", float(start),
                                 {"type": "load", "engine": engine, "target": side})
            for i, ops in enumerate(seconds):
                writer.add_interval(run, _line(start + i, name, ops))
            writer.phase_ended(run, number, float(start + len(seconds)),
                               {"completed": True, **result})
        writer.end_run(run, "completed", None)
    return path, run


def test_the_block_loads_total_row_has_its_rows_and_their_rate(store: tuple[Path, str]) -> None:
    path, run = store
    totals = {r["target"]: r for r in engine_table(path, [run]) if r["op"] == "total"}
    blocks, rows = totals["blocks"], totals["rows"]
    assert blocks["ops"] == 20 and blocks["rows"] == 2000
    assert blocks["rows_per_s"] == ops_per_s(2000, blocks["duration_s"])
    assert blocks["rows_per_s"] == pytest.approx(100 * blocks["ops_per_s"], rel=1e-3)
    assert "rows" not in rows and "rows_per_s" not in rows  # a row per op: its ops are rows
    per_op = [r for r in engine_table(path, [run]) if r["op"] == "insert"]
    assert all("rows_per_s" not in r for r in per_op)  # the phase's rows: its total only


def test_study_4s_cell_gives_both_rates(store: tuple[Path, str]) -> None:
    path, run = store
    rows = engine_table(path, [run])
    totals = {r["target"]: r for r in rows if r["op"] == "total"}
    headers, cells = workload_table(rows)
    assert headers == ["Workload", "rows (cassandra) (ops/s)", "blocks (redis) (ops/s)"]
    [(phase, row_cell, block_cell)] = cells
    assert phase == "load"
    assert row_cell == f"{totals['rows']['ops_per_s']:,.1f}"
    assert block_cell == (f"{totals['blocks']['ops_per_s']:,.1f} "
                          f"({totals['blocks']['rows_per_s']:,.1f} rows/s)")


def test_compare_prints_the_block_loads_rows(store: tuple[Path, str],
                                             capsys: pytest.CaptureFixture[str]) -> None:
    from loadtower.cli import main

    path, run = store
    assert main(["compare", run, "--store", str(path)]) == 0
    rows_per_s = next(r for r in engine_table(path, [run])
                      if r["op"] == "total" and r["target"] == "blocks")["rows_per_s"]
    assert f"({rows_per_s:,.1f} rows/s)" in capsys.readouterr().out
