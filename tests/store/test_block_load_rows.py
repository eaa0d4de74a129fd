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


def build_block_load_store(path: Path) -> str:
    """A run of one load phase on two targets (SIDES) written to `path`; its id."""
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
    return run


@pytest.fixture
def store(tmp_path: Path) -> tuple[Path, str]:
    path = tmp_path / "s.duckdb"
    return path, build_block_load_store(path)


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


# The report: a load of 100-row blocks (10 ops/s, 1,000 rows/s) against a row per op
# (500 ops/s): the blocks side has twice the rows/s, not a fiftieth of the throughput.


def _totals(path: Path, run: str) -> dict[str, dict]:
    return {r["target"]: r for r in engine_table(path, [run]) if r["op"] == "total"}


def test_the_reports_verdict_compares_rows_per_s(store: tuple[Path, str]) -> None:
    from loadtower.store.report_html import _phase_verdicts
    from loadtower.store.report_summary import phase_headlines

    path, run = store
    rows = engine_table(path, [run])
    headlines = phase_headlines(rows)
    totals = _totals(path, run)
    assert {r["target"]: r.get("rows_per_s") for r in headlines} == {
        "rows": None, "blocks": totals["blocks"]["rows_per_s"]}  # fmt: skip
    [verdict] = _phase_verdicts(headlines, rows)
    ratio = totals["blocks"]["rows_per_s"] / totals["rows"]["ops_per_s"]
    assert f"{ratio:.2f}" == "2.00"
    assert f"<b>load</b>: blocks {ratio:.2f}× the row throughput (rows/s) of rows" in verdict
    assert "50.00×" not in verdict  # the row side's ops/s over the blocks'
    assert "p99" not in verdict  # a block's p99 against a row's: no verdict


def test_the_verdict_compares_rows_when_the_load_ops_are_named_apart() -> None:
    """A block load's op named apart (``insert_batch``) from a row load's (``insert``):
    their rows still compare; a mix of different op types still does not."""
    from loadtower.store.report_html import _phase_verdicts

    def total(phase: str, target: str, ops_per_s: float, **rows: float) -> dict:
        return {"phase": phase, "op": "total", "target": target, "ops_per_s": ops_per_s,
                "p99_ms": 2.0, **rows}  # fmt: skip

    headlines = [total("load", "cass", 500.0), total("load", "ch", 10.0, rows_per_s=1000.0),
                 total("mix", "cass", 50.0), total("mix", "ch", 40.0)]  # fmt: skip
    ops = [("load", "cass", "insert"), ("load", "ch", "insert_batch"), ("mix", "cass", "read"),
           ("mix", "ch", "update")]  # fmt: skip
    engines = headlines + [{"phase": p, "target": t, "op": op} for p, t, op in ops]
    [verdict] = _phase_verdicts(headlines, engines)
    assert "<b>load</b>: ch 2.00× the row throughput (rows/s) of cass" in verdict


def test_the_workload_chart_plots_rows_per_s(store: tuple[Path, str]) -> None:
    from loadtower.store.report_charts import workload_figure

    path, run = store
    totals = _totals(path, run)
    figure = workload_figure(engine_table(path, [run]), str)
    assert figure is not None
    bars = {bar["name"]: bar for bar in figure["data"]}
    assert bars["blocks"]["y"] == [totals["blocks"]["rows_per_s"]]  # engine_table's figure
    assert bars["rows"]["y"] == [totals["rows"]["ops_per_s"]]  # a row per op: its ops are rows
    assert bars["blocks"]["x"] == bars["rows"]["x"] == ["load (rows/s)"]
    assert figure["layout"]["yaxis"]["title"] == {"text": "rows/s"}
    blocks = totals["blocks"]
    assert bars["blocks"]["hovertext"] == [
        f"{blocks['rows_per_s']:,.1f} rows/s ({blocks['ops_per_s']:,.1f} ops/s, blocks of rows)"]
    rows = totals["rows"]
    assert bars["rows"]["hovertext"] == [f"{rows['ops_per_s']:,.1f} rows/s (a row per op)"]


def test_the_reports_headline_cell_is_study_4s(store: tuple[Path, str]) -> None:
    from loadtower.store import StoreReader
    from loadtower.store.report_html import render
    from tests.store.test_report import parse

    path, run = store
    page = parse(render(StoreReader(path), run))
    headlines = {row[1]: row[3] for row in page.tables["headlines"][1:]}
    _headers, [[_phase, row_cell, block_cell]] = workload_table(engine_table(path, [run]))
    assert headlines == {"rows": row_cell, "blocks": block_cell}
    assert block_cell.endswith(" rows/s)")
