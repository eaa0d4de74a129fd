"""Steering a live run's load from its dashboard (keys, the rate prompt, the palette)
against a real control server around a real RunControl whose phase steering is the
orchestrator's own (steering.Steering): its replies, and the rate_change /
users_change events it stores in the run's store, which the dashboard then reads.
Only the agents' side is a recorder (what the load would have been told)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from textual.command import CommandPalette

from loadtower.orchestrator.control import ControlServer, RunControl
from loadtower.orchestrator.steering import Steering
from loadtower.tui.app import LoadtowerApp
from loadtower.tui.screens.dashboard import SPEEDS, RunDashboard
from loadtower.tui.widgets.steer_prompt import SteerPrompt
from tests.tui.helpers import SIZE, screen_text, settle, wait_for
from tests.tui.live_writer import LIVE_RUN, START, LiveRun
from tests.tui.test_app import palette_titles

pytestmark = pytest.mark.timeout(90)


class RecordingLoad:
    """The agents' side: what the load was told (kind, value)."""

    def __init__(self) -> None:
        self.steers: list[tuple[str, float]] = []

    async def steer(self, kind: str, value: float) -> None:
        self.steers.append((kind, value))


class StoreContext:
    """What Steering needs of a phase's context: the load, the clock, and events stored
    in the run's store as the orchestrator stores them."""

    def __init__(self, run: LiveRun) -> None:
        self.run, self.load = run, RecordingLoad()

    def clock(self) -> float:
        return float(self.run.ts)

    def event(self, kind: str, message: str, host: str | None = None,
              data: dict[str, Any] | None = None) -> None:
        self.run.writer.event(LIVE_RUN, self.clock(), kind, message, host=host,
                              phase=self.run.phase, data=data)
        self.run.writer.flush()


async def serve(run: LiveRun, path: Path, kind: str, level: float
                ) -> tuple[ControlServer, RecordingLoad]:
    control = RunControl()
    ctx = StoreContext(run)
    control.steer = Steering(ctx, run.phase, kind, level, START)  # type: ignore[arg-type]
    server = ControlServer(control, path)
    await server.start()
    return server, ctx.load


@pytest.fixture
def open_model(store: Path) -> Iterator[LiveRun]:
    run = LiveRun(store, model={"rate": 500})
    try:
        run.second(ops=500)
        yield run
    finally:
        run.close()


@pytest.fixture
def closed_model(store: Path) -> Iterator[LiveRun]:
    run = LiveRun(store, model={"users": 4})
    try:
        run.second(ops=200)
        yield run
    finally:
        run.close()


@pytest.fixture
async def rate_control(open_model: LiveRun, tmp_path: Path
                       ) -> AsyncIterator[tuple[Path, RecordingLoad]]:
    path = tmp_path / "control" / "run.sock"
    server, load = await serve(open_model, path, "rate", 500)
    try:
        yield path, load
    finally:
        await server.close()


@pytest.fixture
async def users_control(closed_model: LiveRun, tmp_path: Path
                        ) -> AsyncIterator[tuple[Path, RecordingLoad]]:
    path = tmp_path / "control" / "run.sock"
    server, load = await serve(closed_model, path, "users", 4)
    try:
        yield path, load
    finally:
        await server.close()


def messages(app: LoadtowerApp) -> list[str]:
    return [n.message for n in app._notifications]


def status(dashboard: RunDashboard) -> str:
    return str(dashboard.query_one("#status").full)  # type: ignore[attr-defined]


def footer(pilot: Any) -> str:
    return screen_text(pilot).splitlines()[-1]


async def type_level(pilot: Any, text: str) -> None:
    await pilot.press("r")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, SteerPrompt), "the prompt")
    await pilot.press(*text, "enter")
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, RunDashboard), "the dashboard")


async def test_keys_double_raise_lower_and_halve_the_rate(
        store: Path, open_model: LiveRun, rate_control: tuple[Path, RecordingLoad]) -> None:
    path, load = rate_control
    app = LoadtowerApp(store, open_run=LIVE_RUN, live=True, control_path=path)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(pilot)
        dashboard = app.screen
        assert isinstance(dashboard, RunDashboard)
        assert "rate 500 ops/s" in status(dashboard)
        keys = footer(pilot)
        assert "-+r Rate" in keys and "Faster" not in keys

        await pilot.press("asterisk")  # 500 -> 1,000 ops/s
        await wait_for(pilot, lambda: load.steers == [("rate", 1000.0)], "the doubled rate")
        await wait_for(pilot, lambda: "ok: phase steady now at 1,000 ops/s" in messages(app),
                       "the run's reply")
        open_model.second(ops=1000)  # the store has the change: the dashboard reads it
        await wait_for(pilot, lambda: any(e["kind"] == "rate_change"
                                          for e in dashboard.snap.events),  # type: ignore[union-attr]
                       "the change in the event list")
        await settle(pilot)
        assert "rate 1,000 ops/s" in status(dashboard)
        snap = dashboard.snap
        assert snap is not None and snap.phases[0].steer == ("rate", 1000.0)
        assert any(kind == "rate_change" for _ts, kind in snap.markers)  # on the timeline
        assert "⇅" in screen_text(pilot)  # its glyph: on the bar and in the event list

        await pilot.press("plus")  # the next step: 1,200
        await wait_for(pilot, lambda: load.steers[-1:] == [("rate", 1200.0)], "a step up")
        await pilot.press("minus")  # back down, from the level asked last
        await wait_for(pilot, lambda: load.steers[-1:] == [("rate", 1000.0)], "a step down")
        await pilot.press("slash")
        try:
            await wait_for(pilot, lambda: load.steers[-1:] == [("rate", 500.0)], "halved")
        except AssertionError as exc:  # what the run was asked, to tell a lost key from a race
            raise AssertionError(f"{exc}; the run was asked {load.steers}") from None
        assert [value for _kind, value in load.steers] == [1000.0, 1200.0, 1000.0, 500.0]
        # the status line follows on the dashboard's next refresh (a CI run once read it
        # a refresh early, still at 1,000)
        await wait_for(pilot, lambda: "rate 500 ops/s" in status(dashboard), "the status at 500")


async def test_a_typed_rate_is_sent_a_bad_one_named_a_refused_one_told(
        store: Path, open_model: LiveRun, rate_control: tuple[Path, RecordingLoad]) -> None:
    path, load = rate_control
    app = LoadtowerApp(store, open_run=LIVE_RUN, live=True, control_path=path)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(pilot)
        dashboard = app.screen
        assert isinstance(dashboard, RunDashboard)
        await pilot.press("r")
        await wait_for(pilot, lambda: isinstance(app.screen, SteerPrompt), "the prompt")
        assert "runs at rate 500 ops/s" in screen_text(pilot)
        await pilot.press("escape")  # nothing sent
        await wait_for(pilot, lambda: app.screen is dashboard, "the dashboard")

        await type_level(pilot, "2,500")
        await wait_for(pilot, lambda: load.steers == [("rate", 2500.0)], "the typed rate")

        await type_level(pilot, "fast")
        await wait_for(pilot, lambda: any("not a rate: 'fast'" in m for m in messages(app)),
                       "the bad answer named")
        assert sum("fast" in m for m in messages(app)) == 1

        await type_level(pilot, "20M")  # above what a run takes: the run says why not
        await wait_for(pilot, lambda: any("above 10,000,000 ops/s" in m for m in messages(app)),
                       "the refusal")
        refusal = next(n for n in app._notifications if "10,000,000" in n.message)
        assert refusal.severity == "warning"
        await settle(pilot)
        assert load.steers == [("rate", 2500.0)]
        await wait_for(pilot, lambda: "rate 2,500 ops/s" in status(dashboard),
                       "the status at 2,500, the level it still runs at")


async def test_a_closed_model_steers_users_in_keys_and_palette(
        store: Path, closed_model: LiveRun, users_control: tuple[Path, RecordingLoad]) -> None:
    path, load = users_control
    app = LoadtowerApp(store, open_run=LIVE_RUN, live=True, control_path=path)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(pilot)
        dashboard = app.screen
        assert isinstance(dashboard, RunDashboard)
        assert "4 users" in status(dashboard)
        assert "-+r Users" in footer(pilot) and "Rate" not in footer(pilot)
        await pilot.resize_terminal(100, 30)  # the narrowest footer: every key still on it
        await settle(pilot)
        assert "-+r Users" in footer(pilot) and "q Quit" in footer(pilot)

        await pilot.press("plus")
        await wait_for(pilot, lambda: load.steers == [("users", 5.0)], "one user more")
        await type_level(pilot, "8")
        await wait_for(pilot, lambda: load.steers[-1:] == [("users", 8.0)], "8 users")
        await type_level(pilot, "2.5")  # not a whole number: named, not sent
        await wait_for(pilot, lambda: any("not a number of users: '2.5'" in m
                                          for m in messages(app)), "the bad answer named")
        await settle(pilot)
        assert "8 users" in status(dashboard)

        await pilot.press("ctrl+p")
        await wait_for(pilot, lambda: isinstance(app.screen, CommandPalette), "the palette")
        await pilot.press(*"halve")
        await wait_for(pilot, lambda: palette_titles(app)[:1] == ["Halve the users"],
                       "'Halve the users' first")
        assert not any("rate" in t for t in palette_titles(app))
        await pilot.press("enter")
        await wait_for(pilot, lambda: load.steers[-1:] == [("users", 4.0)], "halved users")


async def test_no_steering_in_a_replay_another_phase_or_an_ended_run(
        store: Path, open_model: LiveRun, rate_control: tuple[Path, RecordingLoad]) -> None:
    path, load = rate_control
    replay = LoadtowerApp(store, open_run=LIVE_RUN, live=False)
    async with replay.run_test(size=SIZE, notifications=True) as pilot:
        await settle(pilot)
        dashboard = replay.screen
        assert isinstance(dashboard, RunDashboard)
        assert "Rate" not in footer(pilot) and "rate 500" not in status(dashboard)
        await pilot.press("plus", "asterisk", "r")  # the replay's faster, nothing, nothing
        assert replay.screen is dashboard and dashboard.speed_index == 1
        assert SPEEDS[dashboard.speed_index] == 2

    app = LoadtowerApp(store, open_run=LIVE_RUN, live=True, control_path=path)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(pilot)
        dashboard = app.screen
        assert isinstance(dashboard, RunDashboard)
        assert "Rate" in footer(pilot)
        open_model.next_phase("cleanup", kind="load")  # a phase with no rate to steer
        open_model.second(ops=10)
        await wait_for(pilot, lambda: "Rate" not in footer(pilot), "the keys to go")
        assert "rate 500" not in status(dashboard)
        open_model.next_phase("steady2", model={"rate": 300})
        open_model.second(ops=300)
        await wait_for(pilot, lambda: "Rate" in footer(pilot), "the keys again")
        assert "rate 300 ops/s" in status(dashboard)

        open_model.end("interrupted", "stopped by the operator")
        await wait_for(pilot, lambda: dashboard.ended, "the end of the run")
        await settle(pilot)
        assert "Rate" not in footer(pilot) and "rate 300" not in status(dashboard)
        for key in ("plus", "minus", "asterisk", "slash", "r"):
            await pilot.press(key)
            assert app.screen is dashboard
        await settle(pilot)
        assert load.steers == []
