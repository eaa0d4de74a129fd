"""Stored text with terminal escapes, BEL, CR, NUL and Rich markup in every field: every
screen shows it spelled out, as written, and nothing raw reaches the terminal."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.geometry import Region
from textual.pilot import Pilot
from textual.widgets import DataTable, Input

from loadtower.tui.app import LoadtowerApp
from loadtower.tui.screens.compare import CompareScreen
from loadtower.tui.screens.dashboard import RunDashboard
from loadtower.tui.screens.runs import RunsScreen
from loadtower.tui.screens.sql_console import SqlScreen
from loadtower.tui.widgets.confirm import Confirm
from loadtower.tui.widgets.live_table import LiveTable
from loadtower.tui.widgets.seek import SeekPrompt
from tests.tui.helpers import SIZE, screen_text, settle, wait_for
from tests.tui.hostile_store import HOSTILE_RUN, OTHER_RUN, RAW_BYTES, build_hostile_store

pytestmark = pytest.mark.timeout(120)
SPELLED = "\\x1b]0;PWNED\\x07x\\x1b[2J\\x0d\\x00[/][link=x]y[/link][bold]"


@pytest.fixture
def hostile(tmp_path: Path) -> Path:
    return build_hostile_store(tmp_path / "hostile.duckdb")


def widget_texts(pilot: Pilot) -> str:
    """What every widget of the current screen draws (also a modal's, and a widget
    scrolled or laid out out of view), as text lines."""
    lines = []
    for widget in pilot.app.screen.query("*"):
        width, height = widget.size
        if width and height:
            lines += [strip.text for strip in widget.render_lines(Region(0, 0, width, height))]
    return "\n".join(lines)


def clean(pilot: Pilot, where: str) -> str:
    """The screen as text, after checking no raw control byte is on it."""
    app = pilot.app
    assert app.is_running, f"the app ended on {where}"
    text = screen_text(pilot) + "\n" + widget_texts(pilot)
    for byte in RAW_BYTES:
        assert byte not in text, f"{byte!r} on the screen at {where}"
    for label in (app.title, app.sub_title, app.screen.title or "", app.screen.sub_title or ""):
        assert not any(b in str(label) for b in RAW_BYTES), where
    return text


async def test_runs_replay_compare_and_palette(hostile: Path) -> None:
    app = LoadtowerApp(hostile)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        text = clean(pilot, "runs")
        assert isinstance(app.screen, RunsScreen)
        assert "run \\x1b]0;PWNED" in text and "20260922-hostile-[/]" in text
        runs = app.screen
        runs.query_one(DataTable).move_cursor(row=1)  # the hostile run (the older one)
        await pilot.press("space")
        await pilot.press("up", "space")
        await settle(pilot)
        clean(pilot, "runs, two marked")
        await pilot.press("d")  # the confirm dialog names the run
        await wait_for(pilot, lambda: isinstance(app.screen, Confirm), "the delete dialog")
        await pilot.pause()
        assert "\\x1b]0;PWNED" in clean(pilot, "delete dialog")
        await pilot.press("n")
        await pilot.press("c")
        await settle(pilot)
        assert isinstance(app.screen, CompareScreen)
        text = clean(pilot, "compare")
        assert "load \\x1b]0;PWNED" in text and "op\\x1b]0;PWNED" in text
        await pilot.press("escape")
        await settle(pilot)

        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"Open run")
        await pilot.pause(0.3)
        clean(pilot, "command palette")
        await pilot.press("escape")
        await settle(pilot)

        app.open_run(HOSTILE_RUN)
        await settle(pilot)
        dash = app.screen
        assert isinstance(dash, RunDashboard)
        text = clean(pilot, "replay at the end")
        for shown in ("event \\x1b]0;PWNED", "host\\x1b]0;PWNED"):
            assert shown in text, shown
        agents = dash.query_one("#agents", LiveTable).row_texts()
        assert agents and agents[0][0].startswith("agent" + SPELLED)
        errors = dash.query_one("#errors", LiveTable).row_texts()
        assert errors and errors[0][0] == "Err" + SPELLED
        logged = [t.plain for t in dash.query_one("#log").texts]  # (wrapped on the screen)
        assert logged and all("log " + SPELLED in line for line in logged)
        assert "run \\x1b]0;PWNED" in dash.query_one("#status").full.plain
        for keys in (["space"], ["left", "left"], ["bracketleft"], ["w"], ["P"], ["L"],
                     ["question_mark"], ["escape"]):
            await pilot.press(*keys)
            await settle(pilot)
            clean(pilot, f"replay after {keys}")
        await pilot.press("g")
        assert isinstance(app.screen, SeekPrompt)
        app.screen.query_one("#seek-input", Input).value = "0s"
        await pilot.press("enter")
        await settle(pilot)
        clean(pilot, "replay after a seek")
        await pilot.press("g")  # an answer that is no time, typed with markup in it
        app.screen.query_one("#seek-input", Input).value = "[/]nope"
        await pilot.press("enter")
        await settle(pilot)
        clean(pilot, "a seek that cannot be done")
        assert "cannot seek to '[/]nope'" in [n.message for n in app._notifications]


async def test_sql_console_output_cannot_drive_the_terminal(hostile: Path) -> None:
    app = LoadtowerApp(hostile)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("2")
        await wait_for(pilot, lambda: isinstance(app.screen, SqlScreen), "the SQL console")
        screen = app.screen
        assert isinstance(screen, SqlScreen)
        await settle(pilot)
        screen.run_query("SELECT chr(27)||']0;PWNED'||chr(7)||'x', chr(27)||'[2J', "
                         "chr(0)||chr(13)||'[/]' AS \"c\x1b[2J\"")
        await settle(pilot)
        assert screen.last_error is None
        text = clean(pilot, "SQL result")
        assert "\\x1b]0;PWNED\\x07x" in text and "\\x1b[2J" in text and "\\x00\\x0d[/]" in text
        screen.run_query("SELECT name, reason FROM runs")
        await settle(pilot)
        assert "run \\x1b]0;PWNED" in clean(pilot, "stored names in SQL")
        screen.run_query("SELECT \x1b[2J")  # an error message that quotes the query
        await settle(pilot)
        assert screen.last_error is not None
        clean(pilot, "SQL error")


async def test_live_dashboard_that_ends_with_a_hostile_reason(hostile: Path) -> None:
    app = LoadtowerApp(hostile, open_run=OTHER_RUN, live=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        dash = app.screen
        assert isinstance(dash, RunDashboard) and dash.ended
        clean(pilot, "live dashboard of an ended run")
        assert SPELLED.replace("\\x0d", "\\x0d") in dash.query_one("#status").full.plain
