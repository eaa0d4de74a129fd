"""Pilot tests of the app's own keys: command palette, help, theme, screens, quit."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest
from textual.command import CommandPalette
from textual.widgets import DataTable, TextArea

from loadtower.tui.actions import APP_ACTIONS
from loadtower.tui.app import THEMES, LoadtowerApp
from loadtower.tui.screens.dashboard import RunDashboard
from loadtower.tui.screens.runs import RunsScreen
from loadtower.tui.screens.sql_console import SqlScreen
from loadtower.tui.screens.start_run import StartRun
from loadtower.tui.widgets.confirm import Confirm
from loadtower.tui.widgets.keys_help import KeysHelp
from loadtower.tui.widgets.seek import SeekPrompt
from tests.tui.fixture_store import RUN_A, RUN_B, RUN_FAILED
from tests.tui.helpers import SIZE, screen_text, settle, wait_for

pytestmark = pytest.mark.timeout(60)


def palette_titles(app: LoadtowerApp) -> list[str]:
    palette = app.screen
    assert isinstance(palette, CommandPalette)
    options = palette.query_one("CommandList")
    return [str(options.get_option_at_index(i).prompt).split("\n")[0]
            for i in range(options.option_count)]


async def test_palette_lists_every_action_and_runs(store: Path) -> None:
    app = LoadtowerApp(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+p")
        await wait_for(pilot, lambda: isinstance(app.screen, CommandPalette), "the palette")
        await wait_for(pilot, lambda: len(palette_titles(app)) >= len(APP_ACTIONS),
                       "the palette's commands")
        titles = palette_titles(app)
        for action in APP_ACTIONS:
            assert action.title in titles
        assert any(RUN_A in t for t in titles) and any(RUN_B in t for t in titles)
        # search, then run a command from the palette
        await pilot.press(*"sql cons")
        await wait_for(pilot, lambda: palette_titles(app)[:1] == ["SQL console"],
                       "'SQL console' first")
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, SqlScreen), "the SQL console")


async def test_palette_opens_a_run(store: Path) -> None:
    app = LoadtowerApp(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+p")
        await wait_for(pilot, lambda: isinstance(app.screen, CommandPalette), "the palette")
        await pilot.press(*"open run bbbb")
        await wait_for(pilot, lambda: any(RUN_B in t for t in palette_titles(app)[:1]),
                       "the run to be found")
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, RunDashboard), "the dashboard")
        await settle(pilot)
        assert app.screen.run_id == RUN_B and not app.screen.live


async def test_help_theme_and_screen_keys(store: Path) -> None:
    app = LoadtowerApp(store, open_run=RUN_A)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert isinstance(app.screen, RunDashboard)
        assert "Step +10s" not in screen_text(pilot)  # a key the footer does not show
        await pilot.press("question_mark")
        assert isinstance(app.screen, KeysHelp)
        await wait_for(pilot, lambda: "Step +10s" in screen_text(pilot), "the keys panel")
        assert "Previous phase" in screen_text(pilot)
        await pilot.press("question_mark")
        assert isinstance(app.screen, RunDashboard)

        first = app.theme
        await pilot.press("t")
        assert app.theme != first and app.theme in THEMES
        for _ in THEMES[1:]:
            await pilot.press("t")
        assert app.theme == first  # the cycle goes round

        await pilot.press("2")
        assert isinstance(app.screen, SqlScreen)
        await pilot.press("escape")
        await pilot.press("1")
        assert isinstance(app.screen, RunsScreen)
        await pilot.press("N")
        assert isinstance(app.screen, StartRun)
        await pilot.press("escape")
        assert isinstance(app.screen, RunsScreen)


async def open_palette(pilot, query: str, first: str) -> None:
    app = pilot.app
    await pilot.press("ctrl+p")
    await wait_for(pilot, lambda: isinstance(app.screen, CommandPalette), "the palette")
    await pilot.press(*query)
    await wait_for(pilot, lambda: palette_titles(app)[:1] == [first], f"'{first}' first")


async def test_palette_offers_the_screen_actions(store: Path) -> None:
    """Every action of the current screen is in the palette, read from its bindings."""
    app = LoadtowerApp(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_palette(pilot, "delete", "Delete")
        await pilot.press("enter")  # destructive: it still asks first
        await wait_for(pilot, lambda: isinstance(app.screen, Confirm), "the delete question")
        await pilot.press("n")
        await settle(pilot)
        assert isinstance(app.screen, RunsScreen) and len(app.screen.runs) == 3

        await open_palette(pilot, "sort", "Sort")
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, RunsScreen)
                       and app.screen.sort_index == 1, "the sort to move on")

        await open_palette(pilot, "reload", "Reload")  # a key the footer does not show
        await pilot.press("escape")

        app.open_run(RUN_A)  # a replay: its keys come from the dashboard's BINDINGS
        await settle(pilot)
        await open_palette(pilot, "seek", "Seek")
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, SeekPrompt), "the seek prompt")
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, RunDashboard), "the dashboard")
        # live-only actions are not offered on a replay
        await pilot.press("ctrl+p")
        await wait_for(pilot, lambda: isinstance(app.screen, CommandPalette), "the palette")
        await wait_for(pilot, lambda: "Seek" in palette_titles(app), "the commands")
        titles = palette_titles(app)
        assert "Stop run" not in titles and "Step +10s" in titles
        assert titles.count("Keys") == 1 and titles.count("Quit") == 1


async def test_palette_shows_names_as_they_are(store: Path) -> None:
    with duckdb.connect(str(store)) as con:
        con.execute("UPDATE runs SET name = '[/oops]' WHERE id = ?", [RUN_FAILED])
    app = LoadtowerApp(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+p")
        await wait_for(pilot, lambda: isinstance(app.screen, CommandPalette), "the palette")
        await wait_for(pilot, lambda: any(RUN_FAILED in t for t in palette_titles(app)),
                       "the runs")
        assert f"Open run [/oops] {RUN_FAILED}" in palette_titles(app)
        await pilot.press(*"oops")
        await wait_for(pilot, lambda: palette_titles(app)[:1] == [
            f"Open run [/oops] {RUN_FAILED}"], "the run found")
        assert app.is_running


async def test_keys_help_lists_this_screens_keys(store: Path) -> None:
    app = LoadtowerApp(store)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        await pilot.press("question_mark")
        assert isinstance(app.screen, KeysHelp)
        await pilot.pause()
        text = screen_text(pilot)
        for words in ("this screen", "Open", "Mark", "Compare", "Filter", "Sort", "Delete",
                      "Reload", "everywhere", "SQL console", "Start a run", "Next theme", "Quit"):
            assert words in text, words
        # the table's own cursor and scroll keys are one line, not a list
        assert "Cursor" not in text and "Page down" not in text.lower()
        assert "move in tables" in text
        await pilot.press("escape")
        assert isinstance(app.screen, RunsScreen)


async def test_sql_history_outlives_the_console(store: Path) -> None:
    app = LoadtowerApp(store)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("2")
        first = app.screen
        assert isinstance(first, SqlScreen)
        for query in ("SELECT 1 AS one", "SELECT 2 AS two"):
            first.run_query(query)
            await settle(pilot)
        await pilot.press("escape")
        assert isinstance(app.screen, RunsScreen)
        await pilot.press("2")
        second = app.screen
        assert isinstance(second, SqlScreen) and second is not first
        editor = second.query_one("#sql-editor", TextArea)
        assert second.history == ["SELECT 1 AS one", "SELECT 2 AS two"]
        assert editor.text == "SELECT 2 AS two"  # the last query, ready to run again
        await pilot.press("ctrl+up")
        assert editor.text == "SELECT 1 AS one"
        await pilot.press("ctrl+r")
        await settle(pilot)
        table = second.query_one("#sql-results", DataTable)
        assert [str(c.label) for c in table.columns.values()] == ["one"]


async def test_q_quits(store: Path) -> None:
    app = LoadtowerApp(store, open_run=RUN_A)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("q")
        await wait_for(pilot, lambda: not app.is_running, "the app to exit")
    assert app.return_code == 0
