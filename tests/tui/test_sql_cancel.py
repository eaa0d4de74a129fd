"""The SQL console's long queries stop: by the cancel key, by leaving the console, and by
quitting the app (which then exits, instead of waiting for the query)."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import DataTable, Static
from textual.worker import WorkerState

from loadtower.tui.actions import all_actions
from loadtower.tui.app import LoadtowerApp
from loadtower.tui.screens.sql_console import SqlScreen
from tests.tui.helpers import SIZE, WAIT_S, settle, wait_for

pytestmark = pytest.mark.timeout(120)
ENDLESS = "SELECT count(*) FROM range(1000000000) a, range(10000) b"  # hours of work


def query_threads() -> list[str]:
    """Threads inside StoreReader.sql now (a query, or its cancel watcher)."""
    found = []
    for ident, frame in sys._current_frames().items():
        f = frame
        while f is not None:
            if f.f_code.co_name in ("sql", "_interrupt_when") and \
                    f.f_code.co_filename.endswith("reader.py"):
                found.append(str(ident))
                break
            f = f.f_back
    return found


def query_workers(app: LoadtowerApp) -> list:
    return [w for w in app.workers if w.group == "sql-query"]


async def start_endless(pilot: Pilot) -> SqlScreen:
    app = pilot.app
    await settle(pilot)
    await pilot.press("2")
    await wait_for(pilot, lambda: isinstance(app.screen, SqlScreen), "the SQL console")
    screen = app.screen
    assert isinstance(screen, SqlScreen)
    await settle(pilot)  # the schema is read
    screen.run_query(ENDLESS)
    await wait_for(pilot, lambda: query_threads() and screen.busy, "the query to run")
    return screen


def status(screen: SqlScreen) -> str:
    return str(screen.query_one("#sql-status", Static).render())


async def test_cancel_key_stops_the_query(store: Path) -> None:
    app = LoadtowerApp(store)
    async with app.run_test(size=SIZE) as pilot:
        screen = await start_endless(pilot)
        assert "ctrl+k" in status(screen)
        assert app.active_bindings["ctrl+k"].enabled  # shown in the footer, usable now
        listed = {a.title: a.keys for a in all_actions(screen)}  # keys help and palette
        assert listed.get("Cancel") == "^k"
        (worker,) = query_workers(app)
        await pilot.press("ctrl+k")
        await wait_for(pilot, lambda: screen.cancelled == 1, "the query to be cancelled")
        await asyncio.wait_for(worker.wait(), WAIT_S)
        assert worker.state == WorkerState.SUCCESS
        assert "query cancelled after" in status(screen)
        assert not screen.busy and not query_threads()
        await pilot.pause()
        assert not app.active_bindings["ctrl+k"].enabled  # nothing left to cancel
        assert screen.query_one("#sql-results", DataTable).row_count == 0
        # the console still works
        screen.run_query("SELECT 41 + 1 AS answer")
        await settle(pilot)
        assert screen.last_rows == [(42,)]


async def test_leaving_the_console_stops_its_query(store: Path) -> None:
    app = LoadtowerApp(store)
    async with app.run_test(size=SIZE) as pilot:
        screen = await start_endless(pilot)
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, SqlScreen), "the runs screen")
        await wait_for(pilot, lambda: screen.cancelled == 1, "the query to be cancelled")
        assert not query_threads() and not screen.busy


def test_quit_exits_while_a_query_runs(store: Path) -> None:
    app = LoadtowerApp(store)
    seen: list[SqlScreen] = []

    async def drive() -> None:
        async with app.run_test(size=SIZE) as pilot:
            seen.append(await start_endless(pilot))
            seen[0].query_one("#sql-results", DataTable).focus()  # q is not typed
            await pilot.press("q")
            await wait_for(pilot, lambda: not app.is_running, "the app to quit")

    asyncio.run(asyncio.wait_for(drive(), WAIT_S))
    assert app.return_code == 0
    deadline = time.monotonic() + WAIT_S
    while query_threads() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not query_threads(), "the query goes on after the app quit"
    assert not seen[0].busy
