"""Pilot tests of the history view: from the runs screen ("h"), the scenario's runs in
time order with the change point marked; "m" follows another figure, "s" only the runs
with the most common settings."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import DataTable

from loadtower.store.history import run_history
from loadtower.tui.actions import screen_actions
from loadtower.tui.app import LoadtowerApp
from loadtower.tui.screens.history import HistoryScreen
from loadtower.tui.screens.runs import RunsScreen
from tests.store.history_store import build_history_store
from tests.tui.helpers import SIZE, settle, wait_for

pytestmark = pytest.mark.timeout(120)


@pytest.fixture(scope="module")
def history_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_history_store(tmp_path_factory.mktemp("tui-history") / "store.duckdb")


def rows(app: LoadtowerApp) -> list[list[str]]:
    table = app.screen.query_one("#history", DataTable)
    return [[str(c) for c in table.get_row_at(i)] for i in range(table.row_count)]


def status(app: LoadtowerApp) -> str:
    return str(app.screen.query_one("#history-status").render())


async def test_history_view_marks_the_change_point(history_store: Path) -> None:
    app = LoadtowerApp(history_store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, RunsScreen)
        assert "history" in [a.action for a in screen_actions(app.screen)]  # the registry
        table = app.screen.query_one("#runs", DataTable)
        table.move_cursor(row=table.get_row_index("run-03"))
        await pilot.press("h")
        await wait_for(pilot, lambda: isinstance(app.screen, HistoryScreen), "history screen")
        await settle(pilot)
        shown = rows(app)
        assert [r[1] for r in shown] == [f"run-{n:02d}" for n in range(1, 10)]
        expected = run_history(history_store, "nightly")
        assert [r[4] for r in shown] == [f"{r.value:.2f}" for r in expected.runs]
        marks = {r[1]: r[5] for r in shown if r[5]}
        assert list(marks) == ["run-06"] and marks["run-06"].startswith("▲ regression +")
        assert shown[8][3].endswith(" *")  # run 9 ran other settings
        assert "9 completed runs, 1 change point, 1 with other settings" in status(app)

        await pilot.press("m")  # p50: the slow runs are slower there too
        await settle(pilot)
        assert "p50" in str(app.screen.query_one("#history-title").render())
        assert [r[1] for r in rows(app) if r[5]] == ["run-06"]

        await pilot.press("s")  # only the most common settings: run 9 goes
        await settle(pilot)
        assert [r[1] for r in rows(app)][-1] == "run-08"
        assert "only the most common settings" in status(app)

        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, RunsScreen), "runs screen")


async def test_history_of_a_scenario_without_completed_runs_says_so(history_store: Path,
                                                                   tmp_path: Path) -> None:
    app = LoadtowerApp(history_store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.push_screen(HistoryScreen(history_store, "ghost"))
        await settle(pilot)
        assert rows(app) == []
        assert "no runs of scenario 'ghost'" in status(app)
