"""Pilot tests of a live dashboard following a store that a real StoreWriter is writing
(in a worker thread, as `loadtower run` writes from its own process): new seconds show
up, the end of the run shows up, names are shown as written (never read as markup),
agents come hottest first, and a dashboard another screen covers does no work."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from textual.screen import Screen

from loadtower.store.reader import StoreReader
from loadtower.tui.app import LoadtowerApp
from loadtower.tui.screens.dashboard import RunDashboard
from loadtower.tui.widgets.live_table import LiveTable
from tests.tui.helpers import screen_text, settle, wait_for
from tests.tui.live_writer import LIVE_RUN, LiveRun

pytestmark = pytest.mark.timeout(90)
SMALL = (100, 30)


@pytest.fixture
def live_store(tmp_path: Path) -> Path:
    return tmp_path / "live.duckdb"


@pytest.fixture
def run(live_store: Path) -> Iterator[LiveRun]:
    writer = LiveRun(live_store, planned=60.0)
    try:
        yield writer
    finally:
        writer.close()


def dash(app: LoadtowerApp) -> RunDashboard:
    screen = app.screen
    assert isinstance(screen, RunDashboard)
    return screen


def status_row(pilot) -> str:
    return screen_text(pilot).splitlines()[0]


async def test_follows_new_seconds_then_shows_the_end(live_store: Path, run: LiveRun) -> None:
    await asyncio.to_thread(run.second, 1200)
    app = LoadtowerApp(live_store, open_run=LIVE_RUN, live=True)
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        screen = dash(app)
        assert "● LIVE" in status_row(pilot) and "1,200 ops/s" in status_row(pilot)
        for ops in (1500, 2100, 2700):
            await asyncio.to_thread(run.second, ops)  # another thread writes and commits
            await wait_for(pilot, lambda ops=ops: f"{ops:,} ops/s" in status_row(pilot),
                           f"{ops:,} ops/s on the status line")
            assert screen.snap is not None and screen.snap.cursor == run.ts
            agents = screen.query_one("#agents", LiveTable)
            assert agents.row_texts()[0][2] == f"{ops:,}"  # the agent's own ops/s
        # live: the time since the start, and the phase's seconds of its planned length
        assert "phase steady 4s/60s" in status_row(pilot), status_row(pilot)
        assert "t+4s " in status_row(pilot) and "t+4s/" not in status_row(pilot)
        assert "ENDED" not in screen_text(pilot)

        await asyncio.to_thread(run.end, "completed")
        await wait_for(pilot, lambda: "ENDED" in status_row(pilot), "the end of the run")
        row = status_row(pilot)
        assert "■ ENDED" in row and "completed" in row and "LIVE" not in row
        # the phase's rate as the store's phase_summary has it, not the last second's
        (summary,) = StoreReader(live_store).phase_summary(LIVE_RUN)
        assert f"{summary['ops_per_s']:,.0f} ops/s (phase)" in row
        assert "2,700 ops/s" not in row


async def test_a_failed_run_says_so_at_100_columns(live_store: Path, run: LiveRun) -> None:
    await asyncio.to_thread(run.second, 800)
    app = LoadtowerApp(live_store, open_run=LIVE_RUN, live=True)
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        await asyncio.to_thread(run.end, "failed", "host db1: SSH connection lost")
        await wait_for(pilot, lambda: "failed" in status_row(pilot), "the failed status")
        assert "■ ENDED" in status_row(pilot)


async def test_names_are_shown_as_written_not_as_markup(live_store: Path) -> None:
    """An error class, an agent and a host that look like Rich markup."""
    agents = {"[x]/0": "[x]", "[/x]/1": "[/x]", "loader[b]/2": "loader[b]"}
    writer = LiveRun(live_store, agents=agents, errors={"[/x]": 1, "[bold]Boom[/]": 2})
    try:
        await asyncio.to_thread(writer.second, 300)
        app = LoadtowerApp(live_store, open_run=LIVE_RUN, live=True)
        async with app.run_test(size=(160, 40)) as pilot:
            await settle(pilot)
            names = ("[x]/0", "[/x]/1", "loader[b]/2", "[/x]", "[bold]Boom[/]")
            await wait_for(pilot, lambda: all(n in screen_text(pilot) for n in names),
                           "every name as written")
            errors = dash(app).query_one("#errors", LiveTable)
            assert [row[0] for row in errors.row_texts()] == ["[bold]Boom[/]", "[/x]"]
    finally:
        writer.close()


async def test_agents_hottest_first_with_a_summary(live_store: Path) -> None:
    agents = {f"loader{i}/0": f"loader{i}" for i in range(12)}
    writer = LiveRun(live_store, agents=agents)
    try:
        await asyncio.to_thread(writer.second, 1200, 85.0)  # loader i at 85 + i % CPU
        app = LoadtowerApp(live_store, open_run=LIVE_RUN, live=True)
        async with app.run_test(size=SMALL) as pilot:
            await settle(pilot)
            table = dash(app).query_one("#agents", LiveTable)
            rows = table.row_texts()
            assert [r[0] for r in rows] == [f"loader{i}/0" for i in range(11, -1, -1)]
            assert rows[0][1] == "96% !" and rows[5][1] == "91% !" and rows[6][1] == "90%"
            assert table.border_title == "agents · 12 · hottest first"
            assert table.border_subtitle == "6 over 90% CPU"
            hot = table.latest[0][1]
            assert "yellow" in str(hot.style)  # the warning style
            # the table holds it; the frame that draws it may come a tick later
            try:
                await wait_for(pilot, lambda: "6 over 90% CPU" in screen_text(pilot)
                               and "loader11/0" in screen_text(pilot), "the agents panel drawn")
            except AssertionError as exc:
                raise AssertionError(f"{exc}; the screen:\n{screen_text(pilot)}") from None
    finally:
        writer.close()


async def test_a_covered_dashboard_does_no_work(live_store: Path, run: LiveRun) -> None:
    await asyncio.to_thread(run.second, 1000)
    app = LoadtowerApp(live_store, open_run=LIVE_RUN, live=True)
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        screen = dash(app)
        assert "1,000 ops/s" in status_row(pilot)
        await app.push_screen(Screen())  # the user went to another screen
        await pilot.pause()
        asked, shown = screen._wanted, screen.snap
        await asyncio.to_thread(run.second, 4000)  # the store changes meanwhile
        ticks = screen.hidden_ticks
        await wait_for(pilot, lambda: screen.hidden_ticks >= ticks + 3, "three skipped ticks")
        assert screen._wanted == asked and screen.snap is shown  # not read, not drawn

        app.pop_screen()
        await wait_for(pilot, lambda: "4,000 ops/s" in status_row(pilot),
                       "the new second once the dashboard is back")
        ticks = screen.hidden_ticks
        await pilot.pause(0.6)
        assert screen.hidden_ticks == ticks  # in view: no tick is skipped


async def test_a_dialog_over_the_dashboard_does_not_stop_it(
        live_store: Path, run: LiveRun) -> None:
    """A see-through dialog (here: "stop the run?") leaves the dashboard in view: it
    goes on following the run."""
    await asyncio.to_thread(run.second, 1000)
    app = LoadtowerApp(live_store, open_run=LIVE_RUN, live=True)
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        screen = dash(app)
        await pilot.press("s")
        assert app.screen is not screen and screen.in_view
        await asyncio.to_thread(run.second, 3000)
        await wait_for(pilot, lambda: "3,000 ops/s" in str(screen.query_one("#status").text),
                       "the new second under the dialog")
        await pilot.press("escape")
        assert app.screen is screen


async def test_the_event_list_follows_the_newest_event(live_store: Path, run: LiveRun) -> None:
    """More events than the pane holds: the newest is in view, and stays in view as
    more arrive (at 100x30); each on one line."""
    for n in range(30):
        await asyncio.to_thread(run.event, "warning", f"warning number {n}")
    await asyncio.to_thread(run.second, 500)
    app = LoadtowerApp(live_store, open_run=LIVE_RUN, live=True)
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        text = screen_text(pilot)
        assert "! warning number 29" in text and "warning number 0 " not in text
        await asyncio.to_thread(run.event, "fault", "fault 'kill' on db1")
        await asyncio.to_thread(run.second, 600)
        await wait_for(pilot, lambda: "× fault 'kill' on db1" in screen_text(pilot),
                       "the new event in view")
        assert "× fault" in screen_text(pilot)  # and in the timeline's legend
