"""Pilot tests of a replayed run: play/pause, speed, step, seek, jumps, window, scale,
percentiles, the phase timeline, and the footer's keys. The fixture run: phase 1-load
over [T0, T0+6), ycsb-a over [T0+6, T0+36), a warning event at T0+19. T0 is 14:13:20
on the clocks the dashboard shows."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Input

from loadtower.store.live_feed import WINDOWS
from loadtower.tui.app import LoadtowerApp
from loadtower.tui.screens.dashboard import SPEEDS, RunDashboard
from loadtower.tui.screens.runs import RunsScreen
from loadtower.tui.widgets.chart import LineChart
from loadtower.tui.widgets.confirm import Confirm
from loadtower.tui.widgets.live_table import LiveTable
from loadtower.tui.widgets.seek import SeekPrompt
from loadtower.tui.widgets.timeline import PhaseTimeline
from tests.tui.fixture_store import RUN_A, T0
from tests.tui.helpers import SIZE, screen_text, settle, wait_for

pytestmark = pytest.mark.timeout(60)
END = T0 + 36
SMALL = (100, 30)


def dash(app: LoadtowerApp) -> RunDashboard:
    screen = app.screen
    assert isinstance(screen, RunDashboard)
    return screen


def status(app: LoadtowerApp) -> str:
    return str(dash(app).query_one("#status").text)


def series(app: LoadtowerApp, chart: str) -> dict[str, list[tuple[float, float]]]:
    return {s.name: list(s.points) for s in dash(app).query_one(f"#{chart}", LineChart).series}


async def seek(pilot, answer: str) -> None:
    await pilot.press("g")
    assert isinstance(pilot.app.screen, SeekPrompt)
    pilot.app.screen.query_one("#seek-input", Input).value = answer
    await pilot.press("enter")
    await settle(pilot)


async def opened(pilot) -> RunDashboard:
    await settle(pilot)
    return dash(pilot.app)


async def test_opens_at_the_end_of_the_run(store: Path) -> None:
    app = LoadtowerApp(store, open_run=RUN_A)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        assert screen.cursor == END and screen.snap.cursor == END
        assert not screen.playing
        assert "REPLAY ⏸ 1x" in status(app) and "t+36s/36s" in status(app)
        assert set(series(app, "throughput")) == {"insert", "read", "update"}
        assert set(series(app, "cpu")) == {"db1", "db2"}
        text = screen_text(pilot)
        for title in ("throughput", "latency p99", "node CPU", "node memory", "timeline",
                      "agents", "errors (window)", "host output"):
            assert title in text
        assert "phase ycsb-a (run)" in text and "agent1/0" in text
        assert "WriteTimeout" in text  # two errors at T0+20, inside the last minute


async def test_play_pause_and_speed(store: Path) -> None:
    app = LoadtowerApp(store, open_run=RUN_A)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        await pilot.press("space")  # at the end: plays again from the start
        assert screen.playing
        await settle(pilot)
        assert "REPLAY ▶" in status(app)
        start = screen.snap.cursor
        assert start < T0 + 5
        await wait_for(pilot, lambda: screen.snap.cursor > start, "the replay to move on")
        await pilot.press("space")
        assert not screen.playing
        await settle(pilot)
        paused_at = screen.cursor
        await pilot.pause(0.3)
        assert screen.cursor == paused_at  # paused: the clock stands still
        assert "REPLAY ⏸" in status(app)
        await pilot.press("plus", "plus")
        assert SPEEDS[screen.speed_index] == 4 and "4x" in status(app)
        for _ in SPEEDS:
            await pilot.press("plus")
        assert SPEEDS[screen.speed_index] == 64 and "64x" in status(app)
        for _ in SPEEDS:
            await pilot.press("minus")
        assert SPEEDS[screen.speed_index] == 1 and "1x" in status(app)


async def test_step_seek_and_visible_data(store: Path) -> None:
    app = LoadtowerApp(store, open_run=RUN_A)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        await seek(pilot, "3s")
        assert screen.cursor == T0 + 3 and screen.snap.cursor == T0 + 3
        # only the load phase so far: inserts at seconds 0, 1, 2
        assert set(series(app, "throughput")) == {"insert"}
        assert [x for x, _y in series(app, "throughput")["insert"]] == [T0, T0 + 1, T0 + 2]
        assert "phase 1-load" in status(app) and "t+3s/36s" in status(app)
        await pilot.press("right")
        await settle(pilot)
        assert screen.cursor == T0 + 4
        assert series(app, "throughput")["insert"][-1][0] == T0 + 3
        await pilot.press("shift+right")
        await settle(pilot)
        assert screen.cursor == T0 + 14
        assert set(series(app, "throughput")) == {"insert", "read", "update"}
        assert "phase ycsb-a" in status(app)
        await pilot.press("left")
        await settle(pilot)
        assert screen.cursor == T0 + 13
        await pilot.press("shift+left", "shift+left", "shift+left")
        await settle(pilot)
        assert screen.cursor == T0  # clamped at the start
        # relative and phase-name seeks; a bad answer changes nothing
        await seek(pilot, "+1m")
        assert screen.cursor == END  # clamped at the end
        await seek(pilot, "ycsb-a")
        assert screen.cursor == T0 + 6
        await seek(pilot, "-2s")
        assert screen.cursor == T0 + 4
        await seek(pilot, "soon")
        assert screen.cursor == T0 + 4
        # the timeline shows only what happened before the cursor
        assert "warning" not in {e["kind"] for e in screen.snap.events}
        await seek(pilot, "20s")
        assert "warning" in {e["kind"] for e in screen.snap.events}
        assert "agent agent1/0 at 93%" in screen_text(pilot)


async def test_jump_between_phases_and_events(store: Path) -> None:
    app = LoadtowerApp(store, open_run=RUN_A)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        await seek(pilot, "0s")
        await pilot.press("bracketright")
        await settle(pilot)
        assert screen.cursor == T0 + 6  # phase ycsb-a starts
        await pilot.press("bracketright")
        await settle(pilot)
        assert screen.cursor == T0 + 19  # the CPU warning
        await pilot.press("bracketright")  # nothing further: stays
        await settle(pilot)
        assert screen.cursor == T0 + 19
        await pilot.press("bracketleft")
        await settle(pilot)
        assert screen.cursor == T0 + 6
        await pilot.press("bracketleft")
        await settle(pilot)
        assert screen.cursor == T0


async def test_window_log_scale_and_percentiles(store: Path) -> None:
    app = LoadtowerApp(store, open_run=RUN_A)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        assert screen.snap.window == 60 and "window 1 min" in status(app)
        throughput = screen.query_one("#throughput", LineChart)
        assert throughput.x_range == (END - 60, END)
        for expected in WINDOWS[1:] + WINDOWS[:1]:
            await pilot.press("w")
            await settle(pilot)
            assert screen.snap.window == expected
        # whole run: the x axis spans exactly the run
        await pilot.press("w", "w", "w")
        await settle(pilot)
        assert screen.snap.window == 0 and "window whole run" in status(app)
        assert throughput.x_range == (T0, END)

        latency = screen.query_one("#latency", LineChart)
        assert not latency.log_y
        await pilot.press("L")
        await pilot.pause()
        assert latency.log_y and "log y" in screen_text(pilot)
        lo, hi = latency._y_range()
        assert lo > 0 and hi / lo >= 10  # decades
        await pilot.press("L")
        await pilot.pause()
        assert not latency.log_y and "log y" not in screen_text(pilot)

        assert latency.border_title == "latency p99 (ms)"
        p99 = series(app, "latency")["read"]
        await pilot.press("P")
        assert latency.border_title == "latency p90 (ms)"
        p90 = series(app, "latency")["read"]
        assert all(a <= b for (_x, a), (_y, b) in zip(p90, p99, strict=True))
        await pilot.press("P")
        assert latency.border_title == "latency p50 (ms)"
        await pilot.press("P")
        assert latency.border_title == "latency p50/p90/p99 (ms)"
        assert "read p90" in series(app, "latency") and len(series(app, "latency")) == 9
        await pilot.press("P")
        assert latency.border_title == "latency p99 (ms)"


async def test_live_keys_do_nothing_in_a_replay(store: Path) -> None:
    app = LoadtowerApp(store, open_run=RUN_A)
    async with app.run_test(size=SIZE) as pilot:
        screen = await opened(pilot)
        for key in ("s", "n", "p"):
            await pilot.press(key)
            assert app.screen is screen and not isinstance(app.screen, Confirm)
        assert not screen.phase_paused
        await pilot.press("escape")
        assert isinstance(app.screen, RunsScreen)


async def test_unknown_run_is_reported_not_fatal(store: Path) -> None:
    app = LoadtowerApp(store, open_run="19990101-000000-none")
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(pilot)
        screen = dash(app)
        assert screen.snap is None
        assert any("no run 19990101-000000-none" in n.message for n in app._notifications)
        await pilot.press("escape")
        assert isinstance(app.screen, RunsScreen)


async def test_seek_to_a_clock_time(store: Path) -> None:
    """The times the screen shows (14:13:41) are seek targets too; the other forms stay."""
    app = LoadtowerApp(store, open_run=RUN_A)
    async with app.run_test(size=SMALL) as pilot:
        screen = await opened(pilot)
        await seek(pilot, "14:13:41")
        assert screen.cursor == T0 + 21 and "14:13:41" in status(app)
        await seek(pilot, "t+7s")
        assert screen.cursor == T0 + 7
        await seek(pilot, "14:13")  # 14:13:00, before the run: its start
        assert screen.cursor == T0
        await seek(pilot, "1m")  # past the end: the end
        assert screen.cursor == END
        await seek(pilot, "25:00:00")  # no such time: nothing moves
        assert screen.cursor == END
        await seek(pilot, "14:13:30")
        assert screen.cursor == T0 + 10 and "phase ycsb-a" in status(app)


async def test_footer_shows_step_even_with_the_table_focused(store: Path) -> None:
    """No pane takes the arrow keys from the replay: the footer shows Step, and with the
    agents table focused (tab) the arrows still step."""
    app = LoadtowerApp(store, open_run=RUN_A)
    async with app.run_test(size=SMALL) as pilot:
        screen = await opened(pilot)
        footer = screen_text(pilot).splitlines()[-1]
        assert "Step" in footer and "Seek" in footer
        assert screen.focused is None
        await pilot.press("tab")
        assert isinstance(screen.focused, LiveTable) and screen.focused.id == "agents"
        await pilot.pause()
        footer = screen_text(pilot).splitlines()[-1]
        assert "Step" in footer and "Scroll" not in footer
        await pilot.press("left")
        await settle(pilot)
        assert screen.cursor == END - 1
        await pilot.press("right")
        await settle(pilot)
        assert screen.cursor == END


async def test_timeline_bar_at_100_columns(store: Path) -> None:
    """The phases in order as proportional blocks with their names and lengths, event
    markers under them, and the replay position, legible at 100x30."""
    app = LoadtowerApp(store, open_run=RUN_A)
    async with app.run_test(size=SMALL) as pilot:
        screen = await opened(pilot)
        await seek(pilot, "14:13:41")
        timeline = screen.query_one("#timeline", PhaseTimeline)
        assert timeline.border_title == "timeline · 2 phases · 36s"
        lines = screen_text(pilot).splitlines()
        top = next(i for i, line in enumerate(lines) if "timeline · 2 phases" in line)
        bar, markers = lines[top + 1], lines[top + 2]
        assert "1-load 6s" in bar and "ycsb-a 30s" in bar
        assert bar.index("ycsb-a") < markers.index("!") < markers.index("▲")
        width = timeline.content_size.width
        left = bar.index("│") + 2  # the pane's border and padding
        # proportional: 1-load is 6 of 36 s, ycsb-a starts at 1/6 of the bar
        assert abs((bar.index("ycsb-a") - 1 - left) - width / 6) <= 1
        assert abs((markers.index("▲") - left) - width * 21 / 36) <= 1
        assert abs((markers.index("!") - left) - width * 19 / 36) <= 1
        assert "! warning" in lines[top + 3] and "│ phase" in lines[top + 3]
        # the events beneath, one line each, cut with … where too long
        assert any("14:13:39 ! agent agent1/0" in line and "…" in line
                   for line in lines[top + 4:])

        # a click on the bar seeks there
        await pilot.click(PhaseTimeline, offset=(2 + width // 2, 1))
        await settle(pilot)
        assert abs(screen.cursor - (T0 + 18)) <= 1
