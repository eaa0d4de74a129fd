"""The open model's schedule alone, with no database (docs/agent-protocol.md, "Sending
on time"): the Rust core's clock over local no-op sends (``Core.start_echo``) and the
Python lanes' schedule over a no-op op. Each records every sent op's lateness (send -
intended start) in its own histogram, carried in the interval lines as
``lateness_hist``; when the sends are made slow enough that the schedule falls behind,
the orchestrator's self-saturation warning fires from the lines' lateness alone (their
CPU share is set to 0). No timing threshold is asserted: bench/schedule_lateness.py
measures the figures."""

from __future__ import annotations

import random
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from loadtower.agents.driver_loop import DriverLoop, PhaseConfig
from loadtower.agents.measure import IntervalRecorder
from loadtower.agents.workload.keys import OpMix
from loadtower.orchestrator.sinks import Sinks
from loadtower.protocol.hdr_encoding import decode, decode_v2
from loadtower.scenarios.plan import load_plan
from loadtower.store import StoreReader, StoreWriter

WAIT_S = 20.0  # a bound on waiting for the engine's thread, not a measured time
RUN_S = 1.5  # how long each schedule runs

INVENTORY = """
[hosts.db1]
address = "127.0.0.1"
roles = ["db"]
engine = "cassandra"
[hosts.agent1]
address = "127.0.0.1"
roles = ["agent"]
"""
SCENARIO = """
name = "lateness"
[[phases]]
type = "run"
rate = 1000
duration = "5s"
"""


def _sinks(tmp_path: Path) -> tuple[Sinks, StoreWriter, str]:
    (tmp_path / "inv.toml").write_text(INVENTORY)
    (tmp_path / "sc.toml").write_text(SCENARIO)
    plan = load_plan(tmp_path / "sc.toml", tmp_path / "inv.toml")
    writer = StoreWriter(tmp_path / "store.duckdb")
    run_id = writer.start_run("lateness", "lateness", SCENARIO, INVENTORY, {}, {}, {})
    return Sinks(writer, run_id, plan), writer, run_id


def _warnings(tmp_path: Path, lines: list[dict[str, Any]]) -> tuple[list[str], list[dict]]:
    """The lines through the orchestrator's sinks (CPU share 0: only lateness can warn):
    the warnings' messages, and the store's phase_summary rows."""
    sinks, writer, run_id = _sinks(tmp_path)
    for line in lines:
        sinks.interval({**line, "cpu_pct": 0.0})
    writer.close()
    reader = StoreReader(tmp_path / "store.duckdb")
    events = [e["message"] for e in reader.events(run_id) if e["kind"] == "warning"]
    return events, reader.phase_summary(run_id)


def _lateness_counts(lines: list[dict[str, Any]]) -> tuple[int, int]:
    """(ops, values in the lines' lateness histograms) over every op of the lines."""
    ops = values = 0
    for line in lines:
        for sample in line["ops"].values():
            ops += sample["ops"]
            if sample.get("lateness_hist"):
                values += decode(sample["lateness_hist"]).get_total_count()
    return ops, values


# -- the Rust core's clock -----------------------------------------------------------------
core = pytest.importorskip("loadtower_core", reason="the Rust core is not built (no cargo)")


def _core_lines(rate: float, hold_us: int) -> list[dict[str, Any]]:
    """The core's echo schedule for RUN_S, harvested into interval lines as the agent does."""
    c = core.Core()
    c.start_echo(rate, hold_us)
    try:
        time.sleep(RUN_S)
    finally:
        c.stop(WAIT_S)
    rec = IntervalRecorder("agent1/0", "agent1")
    rec.phase = "run"
    samples = c.harvest(2**40, True)
    for second, op, sample in samples:
        assert op == "echo"
        assert decode_v2(sample["lateness"]).get_total_count() == sample["ops"]
        rec.add_encoded("run", second, op, sample)
    intended, recorded = c.counts()  # a stop gives up on ops it waited too long for
    assert 0 < recorded <= intended
    return [dict(line) for line in rec.flush("run")]


def test_the_core_records_each_echo_ops_lateness(tmp_path: Path) -> None:
    lines = _core_lines(1000.0, 0)
    ops, values = _lateness_counts(lines)
    assert ops > 0 and values == ops  # every op sent, each one's lateness recorded
    events, [row] = _warnings(tmp_path, lines)  # the store keeps the phase's lateness
    assert row["ops"] == ops and row["lateness_p99_ms"] >= row["lateness_p50_ms"] > 0


def test_a_core_that_falls_behind_its_schedule_warns(tmp_path: Path) -> None:
    # each send holds the core's only worker 3 ms: at most 333 ops/s of 1000 asked
    lines = _core_lines(1000.0, 3000)
    ops, values = _lateness_counts(lines)
    assert ops > 0 and values == ops
    events, _ = _warnings(tmp_path, lines)
    assert any("falls behind its schedule" in e for e in events), events


# -- the Python lanes' schedule ------------------------------------------------------------
@pytest.fixture
def engine() -> Iterator[tuple[DriverLoop, list[dict[str, Any]]]]:
    lines: list[dict[str, Any]] = []
    eng = DriverLoop("agent1/0", "agent1", out=lines.append)
    eng.start()
    try:
        yield eng, lines
    finally:
        eng.shutdown(timeout=30)
        assert not eng.thread.is_alive()


def _lane_lines(engine: DriverLoop, lines: list[dict[str, Any]], rate: float,
                hold_s: float) -> list[dict[str, Any]]:
    """One open lane at `rate` for RUN_S over an op that holds the loop `hold_s`."""
    cfg = PhaseConfig(phase="run", mode="run", spec={}, contact_points=[], port=None,
                      username=None, password=None, driver="auto", lane_rate=rate,
                      max_in_flight=16)

    async def op() -> None:
        if hold_s:
            time.sleep(hold_s)  # a slow send: holds the event loop, as a busy one

    async def go() -> None:
        await engine.drain()
        engine.ops = {"echo": op}
        engine.mix = OpMix({"echo": 1.0}, random.Random(1))
        engine.begin_phase(cfg)

    engine.call(go(), WAIT_S)
    engine.add_lane(1)
    time.sleep(RUN_S)
    engine.stop_lanes().result(WAIT_S)
    return [line for line in lines if line.get("type") == "interval"]


def test_a_python_lane_records_each_ops_lateness(
        engine: tuple[DriverLoop, list[dict[str, Any]]]) -> None:
    lines = _lane_lines(*engine, 500.0, 0.0)
    ops, values = _lateness_counts(lines)
    assert ops > 0 and values == ops


def test_a_python_lane_that_falls_behind_warns(
        engine: tuple[DriverLoop, list[dict[str, Any]]], tmp_path: Path) -> None:
    lines = _lane_lines(*engine, 1000.0, 0.005)  # 5 ms a send: at most 200 ops/s
    ops, values = _lateness_counts(lines)
    assert ops > 0 and values == ops
    events, _ = _warnings(tmp_path, lines)
    assert any("falls behind its schedule" in e for e in events), events


def test_closed_and_load_ops_have_no_lateness() -> None:
    rec = IntervalRecorder("a/0", "a")
    rec.offset, rec.phase = 1000.0, "run"  # wall clock = monotonic clock + 1000 s
    rec.ok("run", "read", 0.1, 0.1, 0.101, False)  # closed: intended = sent
    rec.ok("run", "read", 0.2, 0.2005, 0.201, False, open_model=True)
    [line] = rec.flush("run")
    assert decode(line["ops"]["read"]["lateness_hist"]).get_total_count() == 1
    rec.ok("run", "read", 0.3, 0.3, 0.301, False)
    [line] = rec.flush("run")
    assert "lateness_hist" not in line["ops"]["read"]
