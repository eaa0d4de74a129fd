"""Pilot tests of the engines screen: one run of two targets, study 4's table, each cell
the text `loadtower compare RUN` prints for engine_table's figures."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest
from textual.widgets import DataTable, Static

from loadtower.store.commands import compare as compare_command
from loadtower.store.engine_compare import ENGINE_COLUMNS, engine_table
from loadtower.tui.app import LoadtowerApp
from loadtower.tui.screens.engines import EnginesScreen
from loadtower.tui.screens.runs import RunsScreen
from tests.tui.engines_store import RUN_SUITE, build_engines_store
from tests.tui.fixture_store import RUN_A
from tests.tui.helpers import SIZE, screen_text, settle, wait_for

pytestmark = pytest.mark.timeout(60)


@pytest.fixture(scope="module")
def suite_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_engines_store(tmp_path_factory.mktemp("tui-engines") / "store.duckdb")


def _ms(value: float | None, digits: int = 2) -> str:
    return "" if value is None else f"{value:.{digits}f}"


def _expected(row: dict) -> list[str]:
    """The cells of one engine_table row, written out here from the CLI's formats."""
    label = row["target"] if row["target"] == row["engine"] else f"{row['target']} ({row['engine']})"
    return [row["phase"], row["op"], label, f"{row['ops']:,}", f"{row['ops_per_s']:,.1f}",
            _ms(row["avg_ms"]), _ms(row["min_ms"], 3), _ms(row["max_ms"]), _ms(row["median_ms"]),
            _ms(row["p90_ms"]), _ms(row["p95_ms"]), _ms(row["p99_ms"]),
            ", ".join(f"{k} {v:,}" for k, v in row["return_codes"].items())]


def _cli_rows(store: Path, capsys: pytest.CaptureFixture[str],
             monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """The body rows `loadtower compare RUN` prints, cell by cell (on a terminal wide
    enough that no cell folds)."""
    monkeypatch.setenv("COLUMNS", "400")
    parser = argparse.ArgumentParser()
    compare_command.add_arguments(parser)
    capsys.readouterr()
    assert compare_command.run(parser.parse_args([RUN_SUITE, "--store", str(store)])) == 0
    out = []
    for line in capsys.readouterr().out.splitlines():
        cells = [c.strip() for c in line.split("│")[1:-1]]
        if len(cells) == len(ENGINE_COLUMNS) and cells[0] != "phase":
            out.append(cells)
    return out


async def test_one_run_of_two_targets_shows_the_cli_figures(
    suite_store: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    printed = _cli_rows(suite_store, capsys, monkeypatch)  # before the app takes stdout
    app = LoadtowerApp(suite_store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
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
        shown = [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]
        previous = None
        for index, row in enumerate(rows):
            want = _expected(row)
            if (row["phase"], row["op"]) == previous:
                want[:2] = ["", ""]  # as printed: phase and op on the first engine's row
            previous = (row["phase"], row["op"])
            assert shown[index] == want
            key = f"{row['phase']}\x1f{row['op']}\x1f{row['target']}"
            assert table.get_row_index(key) == index  # rows by key
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
        await settle(pilot)
        app.open_engines(RUN_A)
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, EnginesScreen)
        assert screen.error is not None and "ran one target" in screen.error
        assert screen.query_one("#engines-table", DataTable).row_count == 0
        assert f"cannot compare: {screen.error}" in str(
            screen.query_one("#engines-title", Static).render())
