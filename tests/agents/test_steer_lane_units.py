"""A steered rate on the agent's side (issue 31): the Python lanes' schedule goes on from
its next intended start at the new interval (no intended op dropped or sent twice), a
rate for another phase or a closed model is ignored; the Rust feed passes lanes x rate
to the core. Intended starts are computed, not measured: the assertions hold on any
machine speed."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Iterator

import pytest

from loadtower.agents.driver_loop import DriverLoop, PhaseConfig
from loadtower.agents.measure import IntervalRecorder
from loadtower.agents.workload.keys import OpMix
from loadtower.engines.cassandra.agent.rust_feed import RustFeed

WAIT_S = 20.0  # a bound on waiting for the engine's thread, not a measured time


@pytest.fixture
def engine() -> Iterator[DriverLoop]:
    eng = DriverLoop("agent1/0", "agent1", out=lambda line: None)
    eng.start()
    try:
        yield eng
    finally:
        eng.shutdown(timeout=30)
        assert not eng.thread.is_alive()


def _phase(engine: DriverLoop, rate: float | None, intended: list[float]) -> PhaseConfig:
    cfg = PhaseConfig(phase="run", mode="run", spec={}, contact_points=[], port=None,
                      username=None, password=None, driver="auto", lane_rate=rate,
                      max_in_flight=16)
    timed = engine._timed

    async def recorded(phase: str, op: str, start: float, late: bool,
                       open_model: bool = False) -> None:
        intended.append(start)
        await timed(phase, op, start, late, open_model)

    async def op() -> None:
        return None

    async def go() -> None:
        await engine.drain()
        engine.ops = {"echo": op}
        engine.mix = OpMix({"echo": 1.0}, random.Random(1))
        engine._timed = recorded  # type: ignore[method-assign]
        engine.begin_phase(cfg)

    engine.call(go(), WAIT_S)
    return cfg


def _wait_for(intended: list[float], count: int) -> None:
    deadline = time.monotonic() + WAIT_S
    while len(intended) < count and time.monotonic() < deadline:
        time.sleep(0.01)
    assert len(intended) >= count, f"{len(intended)} ops within {WAIT_S} s"


def test_a_python_lane_goes_on_at_the_new_interval(engine: DriverLoop) -> None:
    intended: list[float] = []
    cfg = _phase(engine, 200.0, intended)
    engine.add_lane(1)
    _wait_for(intended, 20)
    engine.call(engine.set_lane_rate("run", 1000.0), WAIT_S)
    changed_at = len(intended)
    _wait_for(intended, changed_at + 40)
    engine.stop_lanes().result(WAIT_S)
    assert cfg.lane_rate == 1000.0
    gaps = [b - a for a, b in zip(intended, intended[1:], strict=False)]
    assert gaps[: changed_at - 2] == pytest.approx([1 / 200] * (changed_at - 2))
    # the op scheduled when the rate changed keeps its start; every later one is 1 ms on
    assert gaps[changed_at + 1:] == pytest.approx([1 / 1000] * len(gaps[changed_at + 1:]))
    assert len(set(intended)) == len(intended)  # none twice


def test_a_rate_for_another_phase_or_a_closed_model_changes_nothing(engine: DriverLoop) -> None:
    intended: list[float] = []
    cfg = _phase(engine, 200.0, intended)
    engine.call(engine.set_lane_rate("earlier-phase", 1000.0), WAIT_S)
    engine.call(engine.set_lane_rate("run", -5.0), WAIT_S)
    assert cfg.lane_rate == 200.0
    closed = _phase(engine, None, intended)
    engine.call(engine.set_lane_rate("run", 1000.0), WAIT_S)
    assert closed.lane_rate is None


class FakeCore:
    """What the feed asks of the core's open model (the core itself is tested in Rust
    and by tests/agents/test_schedule_lateness_units.py)."""

    def __init__(self) -> None:
        self.rates: list[tuple[str, float]] = []

    def start(self, rate: float) -> None:
        self.rates.append(("start", rate))

    def set_rate(self, rate: float) -> None:
        self.rates.append(("set_rate", rate))

    def stop(self, timeout: float) -> int:
        return 0


def test_the_rust_feed_gives_the_core_lanes_times_the_steered_rate() -> None:
    feed = RustFeed(IntervalRecorder("a/0", "a"), warn=lambda m: None, out=lambda line: None)
    core = feed.core = FakeCore()
    feed.mode = "open"

    async def scenario() -> None:
        lanes = [asyncio.Event() for _ in range(4)]
        tasks = [asyncio.create_task(feed.lane(stopped, 100.0)) for stopped in lanes]
        await asyncio.sleep(0)
        feed.set_lane_rate(250.0)
        lanes[0].set()
        await asyncio.sleep(0)
        for stopped in lanes[1:]:
            stopped.set()
        await asyncio.gather(*tasks)
        await feed.idle()

    asyncio.run(scenario())
    assert core.rates[:5] == [("start", 100.0), ("set_rate", 200.0), ("set_rate", 300.0),
                              ("set_rate", 400.0), ("set_rate", 1000.0)]
    assert core.rates[5] == ("set_rate", 750.0)  # a lane left: 3 x 250

