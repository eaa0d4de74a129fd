"""Start quickstart on the sandbox from the TUI, watch live numbers arrive, double its
rate by key (500 -> 1,000 ops/s, issue 31), stop it."""

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

pytestmark = [pytest.mark.integration, pytest.mark.alone,  # a live TUI's frames
              pytest.mark.timeout(600)]


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

            # `*` doubles the run phase's rate (after 3 whole seconds at 500 ops/s): the
            # stored seconds follow within 2 s
            await wait_for(pilot, lambda: bool(_seconds(store)), 30, "the stored seconds")
            first = min(_seconds(store) or {0: 0})
            await wait_for(pilot, lambda: _second(store, first + 3) is not None, 60,
                           "three seconds of the run phase", seen)
            await pilot.press("asterisk")
            await wait_for(pilot, lambda: bool(_changes(store)), 30, "the rate_change event")
            [change] = _changes(store)
            await wait_for(pilot, lambda: _second(store, int(change["ts"]) + 4) is not None,
                           60, "four seconds at the new rate", seen)
            steered_at = int(change["ts"])
            assert change["data"]["from"] == 500.0 and change["data"]["to"] == 1000.0
            assert "1,000 ops/s" in str(dash.query_one("#status").render())

            await pilot.press("s")
            await wait_for(pilot, lambda: isinstance(app.screen, Confirm), 10, "the stop confirm")
            await pilot.press("y")
            process = app.started_runs[0].process
            await wait_for(pilot, lambda: process.poll() is not None, 120, "the run to stop")
            assert process.returncode == 3, app.started_runs[0].output.read_text()
    finally:
        stop_leftovers(app)
    reader = StoreReader(store)
    run = reader.runs()[0]
    assert run["status"] == "interrupted"
    seconds = _per_second(reader.op_seconds(run["id"], "ycsb-a"))
    before = [seconds.get(t, 0) for t in range(max(steered_at - 3, min(seconds) + 1),
                                                steered_at)]
    assert before, seconds
    after = [seconds.get(t, 0) for t in range(steered_at + 2, steered_at + 4)]
    print(f"ycsb-a seconds around the change: {before} -> {after}")
    assert all(abs(ops - 500) <= 50 for ops in before), before
    assert all(abs(ops - 1000) <= 100 for ops in after), after
    # the Rust core's intended ops of the phase: each counted once, or given up at the stop
    cores = [e["data"]["core"] for e in reader.events(run["id"])
             if e["kind"] == "drain" and e["phase"] == "ycsb-a" and e["data"].get("core")]
    assert cores and all(c["intended"] == c["counted"] + c["abandoned"] for c in cores)


def _changes(store: Path) -> list[dict]:
    """The run's rate_change events (a short read-only read; the run writes meanwhile)."""
    with contextlib.suppress(Exception):  # the store may be mid-write: try again later
        reader = StoreReader(store)
        return [e for run in reader.runs() for e in reader.events(run["id"])
                if e["kind"] == "rate_change"]
    return []


def _seconds(store: Path) -> dict[int, int]:
    """The run phase's stored seconds so far: second -> ops."""
    with contextlib.suppress(Exception):  # the store may be mid-write: try again later
        reader = StoreReader(store)
        return _per_second([r for run in reader.runs()
                            for r in reader.op_seconds(run["id"], "ycsb-a")])
    return {}


def _per_second(rows: list[dict]) -> dict[int, int]:
    """Second -> ops of every op in it (YCSB A: its reads and its updates)."""
    found: dict[int, int] = {}
    for row in rows:
        found[int(row["ts"])] = found.get(int(row["ts"]), 0) + int(row["ops"])
    return found


def _second(store: Path, ts: int) -> int | None:
    """The ops stored for second `ts` of the run phase, once a later second is stored."""
    rows = _seconds(store)
    return rows.get(ts, 0) if rows and max(rows) > ts else None
