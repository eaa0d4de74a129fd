"""Start quickstart on the sandbox from the TUI, watch live numbers arrive, stop it."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
from textual.widgets import Button, Input

from loadtower.store import StoreReader
from loadtower.tui.app import LoadtowerApp
from loadtower.tui.screens.dashboard import RunDashboard
from loadtower.tui.screens.start_run import StartRun
from loadtower.tui.widgets.confirm import Confirm

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]


async def wait_for(pilot: object, check: Callable[[], bool], timeout: float, what: str,
                   detail: Callable[[], str] = lambda: "") -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not check():
        if loop.time() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}\n{detail()}")
        await pilot.pause(0.5)  # type: ignore[attr-defined]


def stop_leftovers(app: LoadtowerApp) -> None:
    """Whatever happened in the test, no run started here outlives it."""
    for started in app.started_runs:
        process: subprocess.Popen[bytes] = started.process
        if process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=30)


async def test_start_quickstart_from_the_tui_see_live_numbers_then_stop_it(
    sandbox: dict, tmp_path: Path
) -> None:
    store = tmp_path / "runs.duckdb"
    inventory = Path(sandbox["dir"]) / "inventory.toml"
    app = LoadtowerApp(store)
    try:
        async with app.run_test(size=(140, 40)) as pilot:
            await pilot.press("N")
            await wait_for(pilot, lambda: isinstance(app.screen, StartRun), 10, "the start modal")
            modal = app.screen
            modal.query_one("#start-scenario", Input).value = "quickstart"
            modal.query_one("#start-inventory", Input).value = str(inventory)
            modal.query_one("#start-overrides", Input).value = (
                "dataset.records=2000 phases[1].duration=120s")
            await pilot.click("#validate")
            start = modal.query_one("#start", Button)
            await wait_for(pilot, lambda: not start.disabled, 60, "the plan to validate")
            await pilot.click("#start")
            await wait_for(pilot, lambda: isinstance(app.screen, RunDashboard), 150,
                           "the live dashboard")
            dash = app.screen
            assert isinstance(dash, RunDashboard) and dash.live

            def run_phase_has_ops() -> bool:
                snap = dash.snap
                return bool(snap and snap.phase_at(snap.cursor) == "ycsb-a"
                            and snap.last_second()[0] > 0)

            def seen() -> str:
                snap = dash.snap
                shown = (f"phase {snap.phase_at(snap.cursor)}, last second {snap.last_second()}"
                         if snap else "no snapshot")
                log = app.started_runs[0].output.read_text(errors="replace")[-3000:]
                return f"dashboard: {shown}\nrun output:\n{log}"

            await wait_for(pilot, run_phase_has_ops, 240, "live ops/s in the run phase", seen)
            status = str(dash.query_one("#status").render())
            assert "LIVE" in status and "ops/s" in status
            assert dash.query_one("#throughput").series, "the throughput chart has no series"
            assert dash.query_one("#agents").row_count >= 1

            await pilot.press("s")
            await wait_for(pilot, lambda: isinstance(app.screen, Confirm), 10, "the stop confirm")
            await pilot.press("y")
            process = app.started_runs[0].process
            await wait_for(pilot, lambda: process.poll() is not None, 120, "the run to stop")
            assert process.returncode == 3, app.started_runs[0].output.read_text()
    finally:
        stop_leftovers(app)
    run = StoreReader(store).runs()[0]
    assert run["status"] == "interrupted"
    seconds = StoreReader(store).op_seconds(run["id"], "ycsb-a")
    assert sum(r["ops"] for r in seconds) > 0
