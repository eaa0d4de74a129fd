"""Pilot tests of the app's own keys: command palette, help, theme, screens, quit."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.command import CommandPalette
from textual.widgets import HelpPanel

from loadtower.tui.actions import APP_ACTIONS
from loadtower.tui.app import THEMES, LoadtowerApp
from loadtower.tui.screens.dashboard import RunDashboard
from loadtower.tui.screens.runs import RunsScreen
from loadtower.tui.screens.sql_console import SqlScreen
from loadtower.tui.screens.start_run import StartRun
from tests.tui.fixture_store import RUN_A, RUN_B
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
        assert app.screen.query(HelpPanel)
        await wait_for(pilot, lambda: "Step +10s" in screen_text(pilot), "the keys panel")
        assert "Previous phase" in screen_text(pilot)
        await pilot.press("question_mark")
        assert not app.screen.query(HelpPanel)

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


async def test_q_quits(store: Path) -> None:
    app = LoadtowerApp(store, open_run=RUN_A)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("q")
        await wait_for(pilot, lambda: not app.is_running, "the app to exit")
    assert app.return_code == 0
