"""Pilot tests of the engines screen: one run of two targets, study 4's table, each cell
the text `loadtower compare RUN` prints for engine_table's figures; a block load's total
with its rows per second, as compare's and the report's workload cell gives it."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import DataTable, Static

from loadtower.store.commands import compare as compare_command
from loadtower.store.engine_compare import engine_table
from loadtower.store.engine_text import ENGINE_COLUMNS
from loadtower.store.workload_throughput import workload_table
from loadtower.tui.app import LoadtowerApp
from loadtower.tui.screens.compare import CompareScreen
from loadtower.tui.screens.engines import EnginesScreen
from loadtower.tui.screens.runs import RunsScreen
from tests.store.test_block_load_rows import build_block_load_store
from tests.tui.engines_store import RUN_SUITE, RUN_SUITE_2, build_engines_store
from tests.tui.fixture_store import RUN_A, RUN_B
from tests.tui.helpers import SIZE, screen_text, settle, wait_for
from tests.tui.test_runs_screen import go_to

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(scope="module")
def suite_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_engines_store(tmp_path_factory.mktemp("tui-engines") / "store.duckdb")


def _ms(value: float | None, digits: int = 2) -> str:
    return "" if value is None else f"{value:.{digits}f}"


def _expected(row: dict) -> list[str]:
    """The cells of one engine_table row, written out here from the CLI's formats."""
    target, engine = row["target"], row["engine"]
    same = target == engine or target.startswith(f"{engine} (")  # "mongodb (RUN)": two runs
    label = target if same else f"{target} ({engine})"
    return [row["phase"], row["op"], label, f"{row['ops']:,}", f"{row['ops_per_s']:,.1f}",
            _ms(row["avg_ms"]), _ms(row["min_ms"], 3), _ms(row["max_ms"]), _ms(row["median_ms"]),
            _ms(row["p90_ms"]), _ms(row["p95_ms"]), _ms(row["p99_ms"]),
            ", ".join(f"{k} {v:,}" for k, v in row["return_codes"].items())]


def _cli_rows(store: Path, capsys: pytest.CaptureFixture[str],
             monkeypatch: pytest.MonkeyPatch,
             runs: tuple[str, ...] = (RUN_SUITE,)) -> list[list[str]]:
    """The body rows `loadtower compare RUN` prints, cell by cell (on a terminal wide
    enough that no cell folds)."""
    monkeypatch.setenv("COLUMNS", "400")
    parser = argparse.ArgumentParser()
    compare_command.add_arguments(parser)
    capsys.readouterr()
    assert compare_command.run(parser.parse_args([*runs, "--store", str(store)])) == 0
    out = []
    for line in capsys.readouterr().out.splitlines():
        cells = [c.strip() for c in line.split("│")[1:-1]]
        if len(cells) == len(ENGINE_COLUMNS) and cells[0] != "phase":
            out.append(cells)
    return out


def _check_rows(table: DataTable, rows: list[dict]) -> list[list[str]]:
    """The table holds engine_table's rows, keyed, in the CLI's formats; its cells' text."""
    shown = [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]
    assert len(shown) == len(rows)
    previous = None
    for index, row in enumerate(rows):
        want = _expected(row)
        if (row["phase"], row["op"]) == previous:
            want[:2] = ["", ""]  # as printed: phase and op on the first engine's row
        previous = (row["phase"], row["op"])
        assert shown[index] == want
        key = f"{row['phase']}\x1f{row['op']}\x1f{row['target']}"
        assert table.get_row_index(key) == index  # rows by key
    return shown


async def _engines_of(pilot: Pilot, app: LoadtowerApp, run_id: str) -> EnginesScreen:
    """The engines screen of `run_id`, opened from the app's first screen and drawn."""
    await settle(pilot)
    app.open_engines(run_id)
    await settle(pilot)
    screen = app.screen
    assert isinstance(screen, EnginesScreen)
    return screen


async def test_one_run_of_two_targets_shows_the_cli_figures(
    suite_store: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    printed = _cli_rows(suite_store, capsys, monkeypatch)  # before the app takes stdout
    app = LoadtowerApp(suite_store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await go_to(pilot, RUN_SUITE)
        await pilot.press("c")  # nothing marked: the run under the cursor, two targets
        await wait_for(pilot, lambda: isinstance(app.screen, EnginesScreen), "engines screen")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, EnginesScreen) and screen.error is None
        table = screen.query_one("#engines-table", DataTable)
        assert [str(c.label) for c in table.columns.values()] == list(ENGINE_COLUMNS)
        rows = engine_table(suite_store, [RUN_SUITE])
        # two workloads x (their ops + total) x two engines
        assert len(rows) == table.row_count == 10
        assert {r["target"] for r in rows} == {"cassandra", "mongodb"}
        shown = _check_rows(table, rows)
        assert shown == printed  # the very text the CLI prints
        mongo_update = next(r for r in rows if (r["phase"], r["op"], r["target"])
                            == ("ycsb-a", "update", "mongodb"))
        assert mongo_update["return_codes"]["MongoNetwork"] == 2
        assert mongo_update["return_codes"]["MongoTimeout"] == 1
        assert "cassandra, mongodb" in str(screen.query_one("#engines-title", Static).render())
        text = screen_text(pilot)
        assert "OK 1,567, MongoNetwork 2," in text and "MongoTimeout 1" in text
        await pilot.press("escape")
        assert isinstance(app.screen, RunsScreen)


async def test_a_run_of_one_target_is_said_inline(store: Path) -> None:
    app = LoadtowerApp(store)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _engines_of(pilot, app, RUN_A)
        assert screen.error is not None and "ran one target" in screen.error
        assert screen.query_one("#engines-table", DataTable).row_count == 0
        assert f"cannot compare: {screen.error}" in str(
            screen.query_one("#engines-title", Static).render())


async def test_two_runs_of_two_targets_show_their_engines_in_compare(
    suite_store: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    printed = _cli_rows(suite_store, capsys, monkeypatch, (RUN_SUITE, RUN_SUITE_2))
    app = LoadtowerApp(suite_store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        for run_id in (RUN_SUITE, RUN_SUITE_2):
            await go_to(pilot, run_id)
            await pilot.press("space")
        await pilot.press("c")
        await wait_for(pilot, lambda: isinstance(app.screen, CompareScreen), "compare screen")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, CompareScreen) and screen.error is None
        table = screen.query_one("#compare-engines", DataTable)
        assert table.display and table.has_class("-shown")
        rows = engine_table(suite_store, [RUN_SUITE, RUN_SUITE_2])
        assert len(rows) == 20  # 2 workloads x (ops + total) x 2 engines x 2 runs
        assert _check_rows(table, rows) == printed
        assert {r["target"] for r in rows} == {f"{e} ({r})" for e in ("cassandra", "mongodb")
                                               for r in (RUN_SUITE, RUN_SUITE_2)}
        # the per-phase comparison of A and B is there as before
        assert screen.query_one("#compare-table", DataTable).row_count == len(screen.rows) > 0


async def test_runs_of_one_target_compare_without_the_engines_table(store: Path) -> None:
    app = LoadtowerApp(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.open_compare(RUN_A, RUN_B)
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, CompareScreen)
        table = screen.query_one("#compare-engines", DataTable)
        assert table.row_count == 0 and not table.has_class("-shown")
        assert screen.query_one("#compare-table", DataTable).row_count == 3


async def test_a_block_loads_total_gives_its_rows_per_s_as_compare_and_the_report_do(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A load of 100-row blocks (10 ops/s, 1,000 rows/s) beside a row per op (500 ops/s):
    the blocks' total reads as study 4's cell (compare's workload table, the report's
    headline), its ops/s then its rows/s, not its ops/s alone."""
    store = tmp_path / "blocks.duckdb"
    run = build_block_load_store(store)
    _headers, [[_phase, row_cell, block_cell]] = workload_table(engine_table(store, [run]))
    assert (row_cell, block_cell) == ("500.0", "10.0 (1,000.0 rows/s)")
    printed = _cli_rows(store, capsys, monkeypatch, (run,))
    app = LoadtowerApp(store)
    async with app.run_test(size=SIZE) as pilot:
        screen = await _engines_of(pilot, app, run)
        assert screen.error is None
        table = screen.query_one("#engines-table", DataTable)

        def rate(op: str, target: str) -> str:
            return str(table.get_cell(f"load\x1f{op}\x1f{target}", "ops/s"))

        assert rate("total", "blocks") == block_cell
        assert rate("total", "rows") == row_cell  # a row per op: its ops are rows
        assert rate("insert", "blocks") == "10.0"  # the phase's rows: its total only
        shown = [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]
        assert shown == printed  # the very text `loadtower compare RUN` prints
