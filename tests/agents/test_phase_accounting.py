"""Which second and which phase an op counts in, and the drain at a phase's end.

The engine runs on its own thread and loop, as in a worker; its ops here are plain
coroutines that wait on a gate the test opens, so the test decides when each op ends
(the database side of an op is not what is tested: the accounting around it is)."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from loadtower.agents import driver_loop as loop_mod
from loadtower.agents.driver_loop import DriverLoop, PhaseConfig
from loadtower.agents.measure import IntervalRecorder
from loadtower.agents.workload.keys import OpMix

WAIT_S = 20.0  # a bound on waiting for the engine's thread, not a measured time


def wait_until(check: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + WAIT_S
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.005)


class Gate:
    """An op that starts at once and ends when the test opens the gate."""

    def __init__(self, engine: DriverLoop) -> None:
        self.engine = engine
        self.event = asyncio.Event()
        self.started = 0

    async def op(self) -> None:
        self.started += 1
        await self.event.wait()

    def open(self) -> None:
        self.engine.loop.call_soon_threadsafe(self.event.set)


async def instant() -> None:
    return None


@pytest.fixture
def engine() -> Iterator[tuple[DriverLoop, list[dict[str, Any]]]]:
    lines: list[dict[str, Any]] = []
    eng = DriverLoop("a/0", "a", out=lines.append)
    eng.start()
    try:
        yield eng, lines
    finally:
        eng.shutdown(timeout=30)
        assert not eng.thread.is_alive()


def begin(engine: DriverLoop, phase: str, ops: dict[str, Callable[[], Any]],
          think: float = 0.0) -> None:
    """What `configure` ends with, with these ops: the phase starts."""
    cfg = PhaseConfig(phase=phase, mode="run", spec={}, contact_points=[], port=None,
                      username=None, password=None, driver="auto", think_time=think,
                      max_in_flight=16)

    async def go() -> None:
        await engine.drain()
        engine.ops = ops
        engine.mix = OpMix({name: 1.0 for name in ops}, random.Random(1))
        engine.begin_phase(cfg)

    engine.call(go(), WAIT_S)


def remaining(engine: DriverLoop) -> list[dict[str, Any]]:
    """Every line the recorder still holds (as if all seconds were over)."""

    async def go() -> list[dict[str, Any]]:
        return engine.recorder.finished(2**62)

    return engine.call(go(), WAIT_S)


def ops_of(lines: list[dict[str, Any]], phase: str, op: str) -> tuple[int, dict[str, int]]:
    count, errors = 0, {}
    for line in lines:
        if line.get("type") == "interval" and line["phase"] == phase and op in line["ops"]:
            count += line["ops"][op]["ops"]
            for name, n in line["ops"][op]["errors"].items():
                errors[name] = errors.get(name, 0) + n
    return count, errors


# -- the recorder: completion second, phase, span ---------------------------------------
def test_ops_count_in_their_completion_second_however_late_the_tick() -> None:
    rec = IntervalRecorder("a/0", "a")
    rec.offset, rec.phase = 1000.0, "run"  # wall clock = monotonic clock + 1000 s
    # no tick for three seconds: ops completing in 1000, 1001 (two) and 1002
    for intended, done in ((0.1, 0.2), (0.9, 1.5), (1.2, 1.9), (1.95, 2.1)):
        rec.ok("run", "read", intended, intended, done, False)
    first = rec.finished(1002)  # the late tick: seconds 1000 and 1001 are over
    assert [(x["ts"], x["ops"]["read"]["ops"]) for x in first] == [(1000, 1), (1001, 2)]
    assert first[1]["span"] == [1000.9, 1001.9]  # earliest intended start, latest done
    [last] = rec.finished(1003)
    assert (last["ts"], last["ops"]["read"]["ops"], last["span"]) == (1002, 1, [1001.95, 1002.1])
    assert rec.finished(1004) == []


def test_an_op_counts_in_the_phase_it_was_scheduled_in() -> None:
    rec = IntervalRecorder("a/0", "a")
    rec.offset, rec.phase = 1000.0, "a"
    rec.ok("a", "read", 0.1, 0.1, 0.3, False)
    rec.phase = "b"  # phase b configured; an op of phase a completes after that
    rec.ok("a", "read", 0.2, 0.2, 0.6, True)
    rec.error("b", "read", "ReadTimeout", False, 0.4, 0.7)
    lines = rec.finished(1001)  # one second, two phases: a line for each
    assert [(x["ts"], x["phase"]) for x in lines] == [(1000, "a"), (1000, "b")]
    a, b = lines
    assert (a["ops"]["read"]["ops"], a["ops"]["read"]["late"], a["span"]) == (2, 1, [1000.1, 1000.6])
    assert b["ops"]["read"]["errors"] == {"ReadTimeout": 1} and b["span"] == [1000.4, 1000.7]
    assert a["cpu_s"] == 0.0  # the CPU goes on the configured phase's line


def test_a_phase_flush_takes_only_its_own_buckets() -> None:
    rec = IntervalRecorder("a/0", "a")
    rec.offset, rec.phase = 1000.0, "a"
    rec.ok("a", "read", 0.1, 0.1, 5.5, False)  # in the current second: not finished yet
    rec.ok("b", "read", 0.1, 0.1, 5.5, False)
    [a] = rec.flush("a")
    assert (a["phase"], a["ts"]) == ("a", 1005) and rec.pending("b") and not rec.pending("a")


# -- the engine: phase captured at schedule, drain ----------------------------------------
def test_an_op_of_phase_a_ending_after_b_began_is_in_as_line(engine) -> None:  # noqa: ANN001
    eng, _lines = engine
    gate = Gate(eng)
    begin(eng, "A", {"slow": gate.op})
    pending = eng.submit(eng._timed("A", "slow", time.monotonic(), False))
    wait_until(lambda: gate.started == 1, "the op of A to start")
    eng.loop.call_soon_threadsafe(eng.begin_phase, PhaseConfig(  # B begins (no drain)
        phase="B", mode="run", spec={}, contact_points=[], port=None, username=None,
        password=None, driver="auto"))
    wait_until(lambda: eng.recorder.phase == "B", "phase B")
    eng.ops["fast"] = instant
    eng.call(eng._timed("B", "fast", time.monotonic(), False), WAIT_S)
    gate.open()
    pending.result(WAIT_S)
    held = remaining(eng)
    assert ops_of(held, "A", "slow") == (1, {}) and ops_of(held, "A", "fast") == (0, {})
    assert ops_of(held, "B", "fast") == (1, {}) and ops_of(held, "B", "slow") == (0, {})
    for line in held:
        assert line["ts"] == int(line["span"][1])  # the second of its latest completion


def test_stop_drains_the_ops_in_flight_before_its_lines_and_ack(engine) -> None:  # noqa: ANN001
    eng, lines = engine
    gate = Gate(eng)
    begin(eng, "A", {"slow": gate.op})
    eng.add_lane(1)  # a closed-model lane: its first op waits at the gate
    wait_until(lambda: gate.started == 1, "the lane's op")
    stopping = eng.submit(eng.stop_phase(7))
    wait_until(lambda: not eng.lanes, "the lanes to stop")
    assert not any(x.get("kind") == "drain" for x in list(lines))  # it waits for the op
    gate.open()
    stopping.result(WAIT_S)
    kinds = [x.get("kind") or x.get("type") for x in lines]
    assert kinds.count("drain") == 1 and kinds[-1] == "stop_done" and lines[-1]["id"] == 7
    drain = lines[kinds.index("drain")]
    assert drain["phase"] == "A" and drain["data"]["phase"] == "A"
    assert drain["data"]["waited_ops"] == 1 and drain["data"]["abandoned"] == 0
    assert drain["message"].startswith("phase A: waited ")
    assert drain["message"].endswith(" s for 1 in-flight ops (0 did not finish)")
    last_interval = max(i for i, x in enumerate(lines) if x.get("type") == "interval")
    assert last_interval < kinds.index("drain")  # every line of the phase before it
    assert ops_of(lines, "A", "slow") == (1, {})
    assert gate.started == 1  # the stopped lane sent nothing more
    eng.call(eng.drain(), WAIT_S)  # a second stop: no second drain event
    assert [x.get("kind") for x in lines].count("drain") == 1
    assert remaining(eng) == []


def test_past_the_bound_an_op_counts_once_as_drain_timeout(  # noqa: ANN001
    engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    eng, lines = engine
    monkeypatch.setattr(loop_mod, "DRAIN_TIMEOUT_S", 0.05)
    gate = Gate(eng)
    begin(eng, "A", {"slow": gate.op})
    eng.add_lane(1)
    wait_until(lambda: gate.started == 1, "the lane's op")
    eng.submit(eng.stop_phase(1)).result(WAIT_S)  # the gate stays shut: the bound passes
    drain = next(x for x in lines if x.get("kind") == "drain")
    assert (drain["data"]["waited_ops"], drain["data"]["abandoned"]) == (1, 1)
    assert drain["message"].endswith("for 1 in-flight ops (1 did not finish)")
    assert ops_of(lines, "A", "slow") == (1, {"DrainTimeout": 1})
    gate.open()  # it completes after all: ignored
    wait_until(lambda: eng.total_ops == 1, "the op to complete")
    begin(eng, "B", {"fast": instant})  # and it is not in the next phase either
    assert remaining(eng) == []
    assert ops_of(lines, "A", "slow") == (1, {"DrainTimeout": 1})


def test_the_next_phase_begins_only_after_the_drain(engine) -> None:  # noqa: ANN001
    """`configure` drains first: a configure that fails later (an unknown engine) still
    ended the previous phase, with its drain event, before it failed."""
    eng, lines = engine
    gate = Gate(eng)
    begin(eng, "A", {"slow": gate.op})
    eng.add_lane(1)
    wait_until(lambda: gate.started == 1, "the lane's op")
    cfg = PhaseConfig(phase="B", mode="run", spec={"engine": "no-such-db", "dataset": {},
                      "workload": {}}, contact_points=[], port=None, username=None,
                      password=None, driver="auto")
    configuring = eng.submit(eng.configure(cfg))
    wait_until(lambda: not eng.lanes, "the lanes to stop")
    assert not configuring.done()  # waiting for A's op
    gate.open()
    with pytest.raises(Exception, match="no-such-db"):
        configuring.result(WAIT_S)
    drain = next(x for x in lines if x.get("kind") == "drain")
    assert drain["phase"] == "A" and drain["data"]["abandoned"] == 0
    assert ops_of(lines, "A", "slow") == (1, {})


def test_an_operators_stop_gives_up_on_ops_in_flight_at_its_own_bound(  # noqa: ANN001
    engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Ctrl-C: the master's stop carries `drain_s`; the drain ends at that bound, not at
    the agents' own (set here to an hour: the test would hang on it)."""
    eng, lines = engine
    monkeypatch.setattr(loop_mod, "DRAIN_TIMEOUT_S", 3600.0)
    gate = Gate(eng)
    begin(eng, "A", {"slow": gate.op})
    eng.add_lane(1)
    wait_until(lambda: gate.started == 1, "the lane's op")
    eng.submit(eng.stop_phase(3, drain_s=0.05)).result(WAIT_S)  # the gate stays shut
    assert not eng.lanes and gate.started == 1  # no op scheduled after the stop
    drain = next(x for x in lines if x.get("kind") == "drain")
    assert (drain["data"]["waited_ops"], drain["data"]["abandoned"]) == (1, 1)
    assert ops_of(lines, "A", "slow") == (1, {"DrainTimeout": 1})
    assert lines[-1] == {"type": "stop_done", "id": 3, "ts": lines[-1]["ts"]}
    gate.open()
    wait_until(lambda: eng.total_ops == 1, "the op to complete")
    assert remaining(eng) == []  # its late completion is not counted
