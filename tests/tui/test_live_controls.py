"""Live controls of a run's dashboard (stop, skip phase, pause phase) against a real
control server (the one `loadtower run` listens on), started and stopped by each test,
on a run that a real StoreWriter is writing (an ended run takes no commands)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from loadtower.orchestrator.control import ControlServer, RunControl
from loadtower.tui.app import LoadtowerApp
from loadtower.tui.screens.dashboard import RunDashboard
from loadtower.tui.widgets.confirm import Confirm
from tests.tui.helpers import SIZE, screen_text, settle, wait_for
from tests.tui.live_writer import LIVE_RUN, LiveRun

pytestmark = pytest.mark.timeout(60)


@pytest.fixture
async def control(tmp_path: Path) -> AsyncIterator[tuple[RunControl, Path]]:
    run_control = RunControl()
    path = tmp_path / "control" / "run.sock"
    server = ControlServer(run_control, path)
    await server.start()
    try:
        yield run_control, path
    finally:
        await server.close()


@pytest.fixture
def running(store: Path) -> Iterator[LiveRun]:
    run = LiveRun(store)
    try:
        run.second(ops=500)
        yield run
    finally:
        run.close()


def messages(app: LoadtowerApp) -> list[str]:
    return [n.message for n in app._notifications]


async def test_stop_asks_first_then_reaches_the_run(
        store: Path, running: LiveRun, control: tuple[RunControl, Path]) -> None:
    run_control, path = control
    app = LoadtowerApp(store, open_run=LIVE_RUN, live=True, control_path=path)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(pilot)
        dashboard = app.screen
        assert isinstance(dashboard, RunDashboard) and dashboard.live
        assert "LIVE" in str(dashboard.query_one("#status").text)

        await pilot.press("s")
        assert isinstance(app.screen, Confirm)
        assert LIVE_RUN in str(app.screen.query_one("Label").render())
        await pilot.press("n")  # no: nothing is sent
        assert app.screen is dashboard
        await settle(pilot)
        assert run_control.history == []

        await pilot.press("s")
        assert isinstance(app.screen, Confirm)
        await pilot.press("y")
        await wait_for(pilot, lambda: run_control.history == ["stop"], "the stop command")
        assert run_control.stop_requested.is_set()
        await wait_for(pilot, lambda: any("stop requested" in m for m in messages(app)),
                       "the reply to be shown")


async def test_skip_asks_first_and_pause_toggles(
        store: Path, running: LiveRun, control: tuple[RunControl, Path]) -> None:
    run_control, path = control
    app = LoadtowerApp(store, open_run=LIVE_RUN, live=True, control_path=path)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(pilot)
        dashboard = app.screen
        assert isinstance(dashboard, RunDashboard)
        await pilot.press("n")
        assert isinstance(app.screen, Confirm)
        await pilot.press("escape")  # escape is no
        assert app.screen is dashboard and run_control.history == []
        await pilot.press("n")
        await pilot.press("y")
        await wait_for(pilot, lambda: run_control.history == ["skip_phase"], "skip_phase")
        assert run_control.skip_requested.is_set()

        await pilot.press("p")  # not destructive: no question
        assert app.screen is dashboard
        await wait_for(pilot, lambda: run_control.history[-1:] == ["pause_phase"], "pause")
        assert not run_control.resumed.is_set()
        await wait_for(pilot, lambda: "(paused)" in str(dashboard.query_one("#status").text),
                       "the status line to say paused")
        await pilot.press("p")
        await wait_for(pilot, lambda: run_control.history[-1:] == ["resume_phase"], "resume")
        assert run_control.resumed.is_set()


async def test_a_run_that_is_gone_is_reported(
        store: Path, running: LiveRun, tmp_path: Path) -> None:
    gone = tmp_path / "nobody-listens.sock"
    app = LoadtowerApp(store, open_run=LIVE_RUN, live=True, control_path=gone)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(pilot)
        await pilot.press("s", "y")
        await wait_for(pilot, lambda: any("cannot reach the run" in m for m in messages(app)),
                       "the error to be shown")
        assert isinstance(app.screen, RunDashboard)


async def test_an_ended_run_takes_no_commands(
        store: Path, running: LiveRun, control: tuple[RunControl, Path]) -> None:
    """Once the store says the run ended, stop / skip / pause leave the footer and do
    nothing."""
    run_control, path = control
    app = LoadtowerApp(store, open_run=LIVE_RUN, live=True, control_path=path)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(pilot)
        dashboard = app.screen
        assert isinstance(dashboard, RunDashboard)
        assert "Stop run" in screen_text(pilot).splitlines()[-1]
        running.end("interrupted", "stopped by the operator")
        await wait_for(pilot, lambda: dashboard.ended, "the end of the run")
        await settle(pilot)
        footer = screen_text(pilot).splitlines()[-1]
        assert "Stop run" not in footer and "Skip phase" not in footer
        for key in ("s", "n", "p"):
            await pilot.press(key)
            assert app.screen is dashboard
        await settle(pilot)
        assert run_control.history == []
