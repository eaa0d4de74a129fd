"""A load phase at 10,000 ops/s and a run phase at 500 ops/s on one live dashboard: the
run phase's line is drawn on a scale of its own (not squashed to the bottom by the
load's), the scale change is marked on the chart, and the ended run shows the phase's
rate as the store's phase_summary has it. A ramp's step labels (phase labels the phases
table does not list) get scales, seeks and status parts of their own."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from textual.widgets import Input

from loadtower.store.reader import StoreReader
from loadtower.tui.app import LoadtowerApp
from loadtower.tui.screens.dashboard import RunDashboard
from loadtower.tui.widgets.chart import BOUNDARY, HEADROOM, LineChart, Scale, human
from loadtower.tui.widgets.seek import SeekPrompt
from loadtower.tui.widgets.timeline import PhaseTimeline
from tests.tui.helpers import SIZE, screen_text, settle, wait_for
from tests.tui.live_writer import LIVE_RUN, START, LiveRun

pytestmark = pytest.mark.timeout(120)
LOAD_RATE, RUN_RATE, LAST = 10_000, 500, 445
LOAD_S, RUN_S = 5, 10


@pytest.fixture
def live_store(tmp_path: Path) -> Path:
    return tmp_path / "live.duckdb"


@pytest.fixture
def run(live_store: Path) -> Iterator[LiveRun]:
    writer = LiveRun(live_store, phase="load", kind="load")
    try:
        yield writer
    finally:
        writer.close()


def dash(app: LoadtowerApp) -> RunDashboard:
    screen = app.screen
    assert isinstance(screen, RunDashboard)
    return screen


def scale_of(chart: LineChart, ts: float) -> Scale:
    return next(s for s in chart.scales if s.x_lo <= ts < s.x_hi or s is chart.scales[-1])


def write_load_then_run(run: LiveRun, run_seconds: int) -> None:
    for _ in range(LOAD_S):
        run.second(LOAD_RATE)
    run.next_phase("ycsb-a", "run")
    for _ in range(run_seconds):
        run.second(RUN_RATE)


async def test_run_phase_is_readable_after_a_load_spike(live_store: Path, run: LiveRun) -> None:
    await asyncio.to_thread(write_load_then_run, run, RUN_S - 1)
    app = LoadtowerApp(live_store, open_run=LIVE_RUN, live=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = dash(app)
        chart = screen.query_one("#throughput", LineChart)
        run_start = START + LOAD_S
        await wait_for(pilot, lambda: len(chart.scales) == 2, "a scale per phase")
        load_scale, run_scale = chart.scales
        assert load_scale.names == ("load",) and run_scale.names == ("ycsb-a",)
        assert run_scale.x_lo == run_start and load_scale.x_hi == run_start
        assert load_scale.y_hi >= LOAD_RATE
        # the run's values fill its scale: 500 of 550, not 500 of 11,000
        assert run_scale.y_hi == pytest.approx(RUN_RATE * HEADROOM)
        series = {s.name: np.asarray(s.points) for s in chart.series}
        run_values = series["read"][series["read"][:, 0] >= run_start][:, 1]
        shown = run_values / scale_of(chart, run_start).y_hi
        assert shown.min() > 0.8, "the run phase's line is squashed to the bottom"
        # the scale change is marked on the chart, where the run phase starts
        width, height = chart.content_size
        rows = ["".join(t for t, _c in row) for row in chart.lines(width, height)]
        tag = BOUNDARY + human(run_scale.y_hi)
        assert tag in rows[1]  # the plot's top row: the new scale's top, at the boundary
        assert sum(BOUNDARY in r for r in rows) >= 3  # a dotted column down the chart
        assert human(load_scale.y_hi) in rows[1][:8]  # the left labels: the first scale
        assert tag in screen_text(pilot)
        assert "y scale per phase" in str(chart.border_subtitle)
        # the latency chart has a scale for every stretch it shows too
        latency = screen.query_one("#latency", LineChart)
        assert latency.scales and latency.scales[-1].x_hi == chart.scales[-1].x_hi

        # the end: a last partial second; the status line shows the phase's rate
        await asyncio.to_thread(run.second, LAST)
        await asyncio.to_thread(run.end, "completed")
        await wait_for(pilot, lambda: screen.ended, "the end of the run")
        await settle(pilot)
        rows_by_phase = {r["phase"]: r for r in StoreReader(live_store).phase_summary(LIVE_RUN)}
        rate = rows_by_phase["ycsb-a"]["ops_per_s"]
        status = screen.query_one("#status").full.plain
        assert f"{rate:,.0f} ops/s (phase)" in status and "phase ycsb-a" in status
        assert f"{LAST} ops/s" not in status


async def test_one_scale_when_phases_run_at_like_rates(live_store: Path, run: LiveRun) -> None:
    def write() -> None:
        for _ in range(5):
            run.second(900)
        run.next_phase("ycsb-b")  # after "load" at 900 ops/s
        for _ in range(5):
            run.second(700)

    await asyncio.to_thread(write)
    app = LoadtowerApp(live_store, open_run=LIVE_RUN, live=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        chart = dash(app).query_one("#throughput", LineChart)
        assert len(chart.scales) == 1 and chart.scales[0].y_hi == pytest.approx(900 * HEADROOM)
        width, height = chart.content_size
        assert not any(BOUNDARY in "".join(t for t, _c in row)
                       for row in chart.lines(width, height))
        assert not chart.border_subtitle


STEPS = (("saturation@40", 40), ("saturation@4000", 4000), ("saturation@400000", 400_000))


async def test_ramp_steps_get_scales_seeks_and_status(live_store: Path, run: LiveRun) -> None:
    """Step labels are not in the phases table: the timeline still draws the phase, a
    seek goes to a step, and each step far from its neighbours has its own scale."""

    def write() -> None:
        run.next_phase("saturation")
        for label, rate in STEPS:
            for _ in range(4):
                run.second(rate, label=label)
        run.end("completed")

    await asyncio.to_thread(write)
    app = LoadtowerApp(live_store, open_run=LIVE_RUN)  # a replay
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = dash(app)
        chart = screen.query_one("#throughput", LineChart)
        names = [s.names for s in chart.scales]
        assert names == [("saturation@40",), ("saturation@4000",), ("saturation@400000",)]
        assert chart.scales[1].y_hi == pytest.approx(4000 * HEADROOM)
        timeline = screen.query_one("#timeline", PhaseTimeline)
        assert timeline.data is not None
        assert [p.name for p in timeline.data.phases] == ["load", "saturation"]
        await pilot.press("g")
        assert isinstance(app.screen, SeekPrompt)
        app.screen.query_one("#seek-input", Input).value = "saturation@4000"
        await pilot.press("enter")
        await settle(pilot)
        assert screen.cursor == START + 4
        assert "step saturation@4000" in screen.query_one("#status").full.plain
        await pilot.press("bracketright")  # the next step is a jump target
        await settle(pilot)
        assert screen.cursor == START + 8
        assert "step saturation@400000" in screen.query_one("#status").full.plain
