"""One count per phase: a phase's live result, its event, the stored op_phase rows and
phase_summary agree exactly; a backlog's late ops stay in their phase; the load phase
reports its measured duration; drain events are stored as such; before/during/after
figures only where load ran.

The load is synthetic (phase_fixtures.SyntheticLoad: lines with the phase label and
span the agents send), the live stats, the store and the phase handlers real.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from loadtower.orchestrator.live_stats import LiveStats
from loadtower.orchestrator.load_controller import LocustLoad
from loadtower.orchestrator.phases import compaction, fault, load, run
from loadtower.orchestrator.sinks import Sinks
from loadtower.store import StoreReader
from loadtower.store.phase_rate import round_rate
from tests.orchestrator.phase_fixtures import INVENTORY, Second, interval_line, phase_context

TWO_RUNS = """
name = "figures"
[[phases]]
name = "first"
type = "run"
rate = 100
duration = "5s"
[[phases]]
name = "second"
type = "run"
rate = 100
duration = "5s"
"""


def _steady(level: float, offset: int) -> Second:
    return int(level), 2000, 0


def _stored(tmp_path: Path, run_id: str) -> dict[str, dict[str, Any]]:
    return {r["phase"]: r for r in StoreReader(tmp_path / "store.duckdb").phase_summary(run_id)}


def _store_and_count(ctx: Any) -> Any:
    def add(line: dict) -> None:
        ctx.stats.add(line)
        ctx.store.add_interval(ctx.run_id, line)

    return add


def test_late_ops_stay_in_their_phase_and_every_figure_agrees(tmp_path: Path) -> None:
    """'first' leaves a backlog of 60 ops that complete 1-2 s into 'second' (by
    completion second they would be 'second's): they are 'first's in its result and in
    the store, and 'second' has none of them."""
    results = {}
    with phase_context(tmp_path, TWO_RUNS, INVENTORY, _steady) as (ctx, synth, _a):
        synth.sink = _store_and_count(ctx)
        for index, name in enumerate(("first", "second")):
            ctx.current_phase = name
            synth.late = [(1, (40, 9000, 0)), (2, (20, 9000, 0))] if name == "first" else []
            results[name] = asyncio.run(run.run_phase(ctx, index, ctx.plan.scenario.phases[index]))
        run_id = ctx.run_id
    assert results["first"]["ops"] == 500 + 60 and results["second"]["ops"] == 500
    stored = _stored(tmp_path, run_id)
    for name, result in results.items():
        row = stored[name]
        assert (row["ops"], row["ops_per_s"], row["errors"], row["p99_ms"]) == (
            result["ops"], result["ops_per_s"], result["errors"], result["p99_ms"],
        )
        assert row["duration_s"] == result["measured_s"]
    # 'first' ran 5 s from x.25; its backlog completed by x+7.5: 560 ops over 7.25 s
    assert results["first"]["measured_s"] == 7.25
    assert results["first"]["ops_per_s"] == round_rate(560 / 7.25)
    assert results["second"]["ops_per_s"] == 100.0


def test_without_span_the_rate_uses_the_phase_clock(tmp_path: Path) -> None:
    with phase_context(tmp_path, TWO_RUNS, INVENTORY, _steady) as (ctx, synth, _a):
        synth.with_span = False
        ctx.current_phase = "first"
        result = asyncio.run(run.run_phase(ctx, 0, ctx.plan.scenario.phases[0]))
    assert result["ops"] == 500 and result["measured_s"] == 5.0 and result["ops_per_s"] == 100.0


def test_the_load_phase_reports_its_measured_duration_and_set_up_apart(tmp_path: Path) -> None:
    scenario = """
name = "load"
[dataset]
records = 1000
[[phases]]
type = "load"
concurrency = 2
"""

    def second(level: float, offset: int) -> Second:
        return 200, 1500, 0  # 5 s at 200 ops/s

    with phase_context(tmp_path, scenario, INVENTORY, second) as (ctx, synth, _a):
        synth.sink = _store_and_count(ctx)
        start = ctx.clock()

        async def slow_start(phase: str, spec: dict, **kw: Any) -> None:
            ctx.clock.now += 1.5  # agents connecting and preparing: not load
            synth._running = {"phase": phase, "at": ctx.clock(), **kw}
            synth.starts.append(synth._running)

        synth.start = slow_start  # type: ignore[method-assign]
        ctx.current_phase = "load"
        result = asyncio.run(load.run_phase(ctx, 0, ctx.plan.scenario.phases[0]))
        took = ctx.clock() - start
        run_id = ctx.run_id
    assert result["inserted_ops"] == 1000
    assert result["duration_s"] == 5.0  # the lines' span: 1000 records / (2 x 100 ops/s)
    assert result["setup_s"] == round(took - 5.0, 3) == 1.5
    assert result["insert_rate"] == 200.0
    row = _stored(tmp_path, run_id)["load"]
    assert (row["ops"], row["ops_per_s"]) == (1000, result["insert_rate"])
    [event] = [e for e in StoreReader(tmp_path / "store.duckdb").events(run_id)
               if e["kind"] == "load"]
    assert "loaded 1,000 ops in 5.0 s (200.0 ops/s" in event["message"]
    assert event["data"]["insert_rate"] == row["ops_per_s"]


def test_live_stats_are_keyed_by_phase_label_not_by_time() -> None:
    stats = LiveStats()
    stats.add(interval_line(100, "read", 50, 1000, 0, "a", (99.5, 100.9)))
    stats.add(interval_line(101, "read", 30, 1000, 2, "a", (100.0, 101.5)))  # a's backlog
    stats.add(interval_line(101, "read", 70, 1000, 0, "b", (100.8, 101.9)))
    a, b = stats.phase("a"), stats.phase("b")
    assert (a.ops, a.errors, a.duration_s, a.ops_per_s) == (82, 2, 2.0, 41.0)
    assert (b.ops, b.duration_s) == (70, stats.duration("b")) and b.ops_per_s == 63.6
    assert stats.window(101, 102).ops == 102  # by second: both phases' ops
    assert stats.window(101, 102, phase="b").ops == 70
    assert stats.phase("c").ops == 0 and stats.phase("c").ops_per_s == 0.0


def test_a_drain_event_is_stored_as_a_drain_of_its_phase(tmp_path: Path) -> None:
    with phase_context(tmp_path, TWO_RUNS, INVENTORY) as (ctx, _synth, _a):
        sinks = Sinks(ctx.store, ctx.run_id, ctx.plan)
        sinks.phase = "second"  # the orchestrator is already in the next phase
        master = LocustLoad(None, ctx.plan, ctx.run_id, sinks)
        master._dispatch(
            {
                "type": "event",
                "kind": "drain",
                "agent": "agent1/0",
                "phase": "first",
                "message": "drained",
                "data": {"phase": "first", "waited_ops": 1234, "drain_s": 0.75, "abandoned": 3},
            }
        )
        master._dispatch({"type": "event", "kind": "something_new", "message": "x"})
        run_id = ctx.run_id
    events = StoreReader(tmp_path / "store.duckdb").events(run_id)
    [drain] = [e for e in events if e["kind"] == "drain"]
    assert drain["phase"] == "first" and drain["host"] == "agent1"
    assert drain["message"] == (
        "phase first: agent agent1/0 waited 0.75 s for 1,234 in-flight ops; "
        "3 did not finish (DrainTimeout errors)"
    )
    assert drain["data"]["waited_ops"] == 1234 and drain["data"]["drain_s"] == 0.75
    assert [e["kind"] for e in events if e["message"] == "x"] == ["agent"]


COMPACTION = """
name = "compact"
[[phases]]
type = "compaction"
hosts = ["db1"]
{load}
"""


def _inventory_with_compact() -> str:
    return INVENTORY.replace(
        'engine = "cassandra"\n', 'engine = "cassandra"\n[hosts.db1.actions]\ncompact = "true"\n'
    )


def test_compaction_without_load_says_so_instead_of_zero_figures(tmp_path: Path) -> None:
    with phase_context(tmp_path, COMPACTION.format(load=""), _inventory_with_compact()) as (
        ctx, _synth, _a,
    ):
        result = asyncio.run(compaction.run_phase(ctx, 0, ctx.plan.scenario.phases[0]))
    assert result["p99_ms_before"] is None and result["p99_ms_during"] is None
    assert result["notes"] == ["no load ran before", "no load ran during"]
    assert result["load_ran"] == {"before": False, "during": False}


def test_compaction_under_load_has_its_figures(tmp_path: Path) -> None:
    scenario = COMPACTION.format(load="rate = 100")
    with phase_context(tmp_path, scenario, _inventory_with_compact(), _steady) as (
        ctx, _synth, _a,
    ):
        result = asyncio.run(compaction.run_phase(ctx, 0, ctx.plan.scenario.phases[0]))
    assert result["load_ran"] == {"before": True, "during": True} and "notes" not in result
    assert result["p99_ms_before"] == result["p99_ms_during"] > 0
    assert result["ops_per_s_before"] == 100.0


def test_a_fault_whose_load_stopped_before_it_has_no_after_figures(tmp_path: Path) -> None:
    scenario = """
name = "fault"
[[phases]]
type = "fault"
host = "db1"
action = "compact"
after = "5s"
duration = "10s"
rate = 100
"""

    def only_before(level: float, offset: int) -> Second:
        return (100, 2000, 0) if offset < 5 else (0, 0, 0)

    with phase_context(tmp_path, scenario, _inventory_with_compact(), only_before) as (
        ctx, _synth, _a,
    ):
        result = asyncio.run(fault.run_phase(ctx, 0, ctx.plan.scenario.phases[0]))
    assert result["load_ran"] == {"before": True, "after": False}
    assert result["ops_per_s_before"] == 100.0 and result["p99_ms_after"] is None
    assert result["notes"] == ["no load ran after"]


def test_without_span_live_and_stored_rates_agree_on_the_phase_clock(tmp_path: Path) -> None:
    """Lines of older agents (no span): the phase's clock is its `phases` row, started
    by the runner and ended where the handler read its figures (ctx.figures)."""
    with phase_context(tmp_path, TWO_RUNS, INVENTORY, _steady) as (ctx, synth, _a):
        synth.with_span = False
        synth.sink = _store_and_count(ctx)
        ctx.current_phase = "first"
        ctx.phase_started = ctx.clock() - 0.4  # the runner's start, before the handler's
        ctx.store.phase_started(ctx.run_id, 0, "first", "run", ctx.phase_started, {})
        result = asyncio.run(run.run_phase(ctx, 0, ctx.plan.scenario.phases[0]))
        ctx.clock.now += 0.3  # the runner writes the end after the handler returned
        assert ctx.phase_ended is not None and ctx.phase_ended < ctx.clock()
        ctx.store.phase_ended(ctx.run_id, 0, ctx.phase_ended, result)
        run_id = ctx.run_id
    row = _stored(tmp_path, run_id)["first"]
    assert result["measured_s"] == row["duration_s"] == 5.4
    assert (row["ops"], row["ops_per_s"]) == (result["ops"], result["ops_per_s"]) == (500, 92.6)
