"""Pilot tests of the compare screen: one row per phase and op, A over B in each cell."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest
from textual.widgets import DataTable, Static

from loadtower.store import compare_runs
from loadtower.store.compare import interval_text
from loadtower.tui.app import LoadtowerApp
from loadtower.tui.screens.compare import COLUMNS, CompareScreen
from loadtower.tui.widgets.chart import LineChart
from tests.tui.fixture_store import RUN_A, RUN_B, RUN_FAILED
from tests.tui.helpers import SIZE, screen_text, settle

pytestmark = pytest.mark.timeout(60)


async def test_rows_per_phase_and_op(store: Path) -> None:
    app = LoadtowerApp(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.open_compare(RUN_A, RUN_B)
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        table = screen.query_one("#compare-table", DataTable)
        assert [str(c.label) for c in table.columns.values()] == list(COLUMNS)
        assert COLUMNS == ("phase", "op", "run", "ops/s", "Δ ops", "p50 ms", "p90 ms", "p99 ms",
                           "Δ p99", "max ms", "errors", "verdict")
        expected = compare_runs(store, RUN_A, RUN_B)
        assert table.row_count == len(expected) == 3
        for index, want in enumerate(expected):
            cells = {name: str(c) for name, c in zip(COLUMNS, table.get_row_at(index),
                                                      strict=True)}
            assert (cells["phase"], cells["op"]) == (want["phase"], want["op"])
            assert cells["run"] == "A\nB"
            assert cells["ops/s"] == f"{want['ops_per_s_a']:,.1f}\n{want['ops_per_s_b']:,.1f}"
            for col, key in (("p50 ms", "p50_ms"), ("p90 ms", "p90_ms"), ("p99 ms", "p99_ms"),
                             ("max ms", "max_ms")):
                assert cells[col] == f"{want[key + '_a']:,.2f}\n{want[key + '_b']:,.2f}"
            assert cells["errors"] == f"{want['errors_a']}\n{want['errors_b']}"
            for col, key in (("Δ ops", "ops"), ("Δ p99", "p99")):  # compare's words
                below = interval_text(want[f"{key}_change_ci_pct"]) or "too short"
                assert cells[col] == f"{want[f'{key}_change_pct']:+.1f}%\n{below}"
            assert cells["verdict"] == f"ops {want['ops_verdict']}\np99 {want['p99_verdict']}"
        # the figures show what the fixture was made to show: B is slower, same rate
        assert [str(table.get_row_at(i)[2]) for i in range(3)] == ["A\nB"] * 3
        assert all(r["p99_change_pct"] > 0 for r in expected)
        # both runs overlaid, on the same time axis from 0
        for chart_id in ("compare-ops", "compare-p99"):
            chart = screen.query_one(f"#{chart_id}", LineChart)
            assert [s.name for s in chart.series] == ["A", "B"]
            assert chart.x_range == (0.0, 36.0)
            assert all(s.points[0][0] == 0 for s in chart.series)
        text = screen_text(pilot)
        assert f"A fixture {RUN_A} completed 36 s" in text
        assert f"B fixture {RUN_B} completed 36 s" in text
        assert "ops/s over the run (A, B)" in text and "p99 ms over the run (A, B)" in text
        await pilot.press("L")
        assert screen.query_one("#compare-p99", LineChart).log_y
        await pilot.press("escape")
        assert not isinstance(app.screen, CompareScreen)


async def test_a_missing_run_is_said_inline(store: Path) -> None:
    """A run deleted after it was marked: the screen says so, the app goes on."""
    from loadtower.store import delete_run

    delete_run(store, RUN_B)
    app = LoadtowerApp(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.open_compare(RUN_A, RUN_B)
        await settle(pilot)
        screen = app.screen
        assert app.is_running and isinstance(screen, CompareScreen)
        assert screen.error is not None and RUN_B in screen.error
        title = str(screen.query_one("#compare-title", Static).render())
        assert f"cannot compare: {screen.error}" in title
        assert screen.query_one("#compare-table", DataTable).row_count == 0
        await pilot.press("escape")
        assert not isinstance(app.screen, CompareScreen)


async def test_stored_names_are_not_markup(store: Path) -> None:
    """Run, phase and op names with [brackets] are shown as they are."""
    with duckdb.connect(str(store)) as con:
        con.execute("UPDATE runs SET name = '[/oops]' WHERE id = ?", [RUN_A])
        for table in ("op_intervals", "op_minute", "op_phase", "op_second", "events"):
            con.execute(f"UPDATE {table} SET phase = '[cassandra]' WHERE phase = 'ycsb-a'")
        con.execute("UPDATE phases SET name = '[cassandra]' WHERE name = 'ycsb-a'")
        for table in ("op_intervals", "op_minute", "op_phase", "op_second"):
            con.execute(f"UPDATE {table} SET op = '[/r]' WHERE op = 'read'")
    app = LoadtowerApp(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.open_compare(RUN_A, RUN_FAILED)
        await settle(pilot)
        screen = app.screen
        assert app.is_running and isinstance(screen, CompareScreen) and screen.error is None
        table = screen.query_one("#compare-table", DataTable)
        cells = {(str(table.get_row_at(i)[0]), str(table.get_row_at(i)[1]))
                 for i in range(table.row_count)}
        assert ("[cassandra]", "[/r]") in cells
        text = screen_text(pilot)
        assert f"A [/oops] {RUN_A}" in text and "[cassandra]" in text


async def test_ramp_steps_are_rows_of_their_own(tmp_path: Path) -> None:
    from loadtower.store import StoreReader
    from loadtower.store.compare_view import ramp_steps
    from tests.tui.ramp_store import RAMP_A, RAMP_B, STEPS, build_ramp_store

    store = build_ramp_store(tmp_path / "ramp.duckdb")
    app = LoadtowerApp(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.open_compare(RAMP_A, RAMP_B)
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, CompareScreen) and screen.error is None
        table = screen.query_one("#compare-table", DataTable)
        phases = [str(table.get_row_at(i)[0]) for i in range(table.row_count)]
        assert phases == [label for label, _rate in STEPS]  # a row per step, in order
        summary = {r["phase"]: r for r in StoreReader(store).phase_summary(RAMP_A)}
        for index, (label, _rate) in enumerate(STEPS):
            ops = str(table.get_row_at(index)[3]).split("\n")[0]
            assert ops == f"{summary[label]['ops_per_s']:,.1f}"
        steps = screen.query_one("#compare-steps", DataTable)
        expected = ramp_steps(store, RAMP_A)
        if hasattr(StoreReader, "ramp_steps"):  # the store's ramp API, once it has one
            assert [str(steps.get_row_at(i)[0]) for i in range(steps.row_count)] == [
                str(s["label"]) for s in expected]
            assert steps.display == bool(expected)
        else:
            assert expected == [] and steps.row_count == 0 and not steps.display
        # the charts give each step far from its neighbours a scale of its own
        chart = screen.query_one("#compare-ops", LineChart)
        assert [s.names for s in chart.scales] == [(label,) for label, _r in STEPS]


def test_step_rows_pair_a_and_b_by_label() -> None:
    from loadtower.tui.screens.compare import STEP_COLUMNS, step_rows

    def step(label: str, achieved: float, passed: bool, why: str = "") -> dict:
        return {"label": label, "asked": 100, "achieved_ops_per_s": achieved, "p50_ms": 1.0,
                "p90_ms": 2.0, "p99_ms": 3.0, "errors": 0, "passed": passed, "why": why}

    rows = step_rows([step("s@100", 99.5, True), step("s@200", 150.0, False, "p99 \x1b[2J")],
                     [step("s@100", 98.0, True), step("s@300", 10.0, False)])
    cells = [{c: str(v) for c, v in zip(STEP_COLUMNS, row, strict=True)} for row in rows]
    assert [c["step"] for c in cells] == ["s@100", "s@200", "s@300"]
    assert cells[0]["achieved"] == "99.5\n98.0" and cells[0]["passed"] == "yes\nyes"
    assert cells[1]["achieved"] == "150.0\n-" and cells[1]["passed"] == "no\n-"
    assert cells[1]["why"] == "p99 \\x1b[2J\n-"
    assert cells[2]["achieved"] == "-\n10.0"


async def test_tombstones_per_read_beside_the_p99_where_sampled(store: Path) -> None:
    """Runs with Cassandra's tombstones per read (store/table_reads.py) get one more
    column: the p99 of A over B, the figures compare_runs has."""
    from loadtower.store import StoreReader, StoreWriter
    from loadtower.tui.screens.compare import TOMBSTONE_COLUMN

    first = {run: StoreReader(store).phases(run)[0] for run in (RUN_A, RUN_B)}
    with StoreWriter(store) as writer:
        for run, p99 in ((RUN_A, 2.0), (RUN_B, 7.0)):
            phase, name = first[run], "tombstones_per_read/lt.t/"
            writer.node_stats(run, phase["started"] - 0.5, "db1", "cassandra", {name + "reads": 0})
            writer.node_stats(run, phase["ended"], "db1", "cassandra",
                              {name + "reads": 50, name + "p99": p99})
    expected = compare_runs(store, RUN_A, RUN_B)
    app = LoadtowerApp(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.open_compare(RUN_A, RUN_B)
        await settle(pilot)
        table = app.screen.query_one("#compare-table", DataTable)
        assert [str(c.label) for c in table.columns.values()] == [*COLUMNS, TOMBSTONE_COLUMN]
        cells = [str(table.get_row_at(i)[-1]) for i in range(table.row_count)]
        want = [r for r in expected if r["phase"] == first[RUN_A]["name"]]
        assert want and all(r["tombstones_p99_a"] == 2.0 for r in want)
        assert "2.0\n7.0" in cells


async def test_the_curve_table_shows_every_step_of_both_runs(tmp_path: Path) -> None:
    from loadtower.store.curves import curves_of
    from loadtower.tui.screens.compare import CURVE_COLUMNS
    from tests.tui.ramp_store import RAMP_A, RAMP_B, STEPS, build_ramp_store

    store = build_ramp_store(tmp_path / "ramp.duckdb")
    app = LoadtowerApp(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.open_compare(RAMP_A, RAMP_B)
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        curves = screen.query_one("#compare-curves", DataTable)
        assert curves.display and curves.row_count == 2 * len(STEPS)
        expected = curves_of(store, [RAMP_A, RAMP_B])["curves"]
        rows = [dict(zip(CURVE_COLUMNS, map(str, curves.get_row_at(i)), strict=True))
                for i in range(curves.row_count)]
        assert {r["system"] for r in rows} == {"A ?", "B ?"}  # no engine in these params
        for want in expected:
            [got] = [r for r in rows if r["step"] == want["label"]
                     and r["system"] == want["system"]]
            assert got["achieved ops/s"] == f"{want['ops_per_s']:,.1f}"
            assert got["p99 ms"] == f"{want['p99_ms']:,.2f}"
        answer = screen.query_one("#compare-at-target", Static)
        assert answer.display  # each run's ramp: its rate at target (none judged here)
