"""[[thresholds]] judged at a phase's end from the figures phase_summary shows, stored in
threshold_results, and checked live for abort = true."""

from __future__ import annotations

import asyncio
from pathlib import Path

import duckdb

from loadtower.orchestrator import threshold_checks
from loadtower.orchestrator.phases import run
from loadtower.orchestrator.threshold_checks import ThresholdChecks
from loadtower.store import StoreReader
from tests.orchestrator.phase_fixtures import INVENTORY, Second, interval_line, phase_context

SCENARIO = """
name = "slo"
[[phases]]
name = "mix"
type = "run"
rate = 100
duration = "5s"

[[thresholds]]
phase = "mix"
metric = "p99"
max = 1.5

[[thresholds]]
phase = "mix"
op = "read"
metric = "p99"
max = 20

[[thresholds]]
metric = "ops_per_s"
min = 150

[[thresholds]]
metric = "error_rate"
max = 0.01
"""


def _steady(level: float, offset: int) -> Second:
    return int(level), 2000, 0  # 2 ms each


def test_each_threshold_is_judged_on_the_phase_figures_and_stored(tmp_path: Path) -> None:
    with phase_context(tmp_path, SCENARIO, INVENTORY, _steady) as (ctx, synth, _a):
        def add(line: dict) -> None:
            ctx.stats.add(line)
            ctx.store.add_interval(ctx.run_id, line)

        synth.sink = add
        ctx.current_phase = "mix"
        checks = ThresholdChecks(list(ctx.plan.scenario.thresholds))
        started = ctx.clock()
        result = asyncio.run(run.run_phase(ctx, 0, ctx.plan.scenario.phases[0]))
        assert ctx.phase_ended is not None
        verdicts = checks.phase_ended(ctx, "mix", "mix", (started, ctx.phase_ended))
        run_id = ctx.run_id
    assert [v.passed for v in verdicts] == [False, True, False, True]
    assert [v.line() for v in checks.breaches] == [
        "p99 of every op in phase mix <= 1.5 ms: breached, measured 2.00 ms",
        "ops_per_s of every op in phase mix >= 150 ops/s: breached, measured 100.0 ops/s",
    ]
    # the figures the phase's result and phase_summary give
    summary = StoreReader(tmp_path / "store.duckdb").phase_summary(run_id)[0]
    assert verdicts[0].measured == result["p99_ms"] == summary["p99_ms"]
    assert verdicts[2].measured == result["ops_per_s"] == summary["ops_per_s"]
    stored = StoreReader(tmp_path / "store.duckdb").threshold_results(run_id)
    assert {r["target"]: r["passed"] for r in stored} == {v.target: v.passed for v in verdicts}
    con = duckdb.connect(str(tmp_path / "store.duckdb"), read_only=True)
    rows = con.execute(
        "SELECT metric, bound, threshold, measured, passed, live FROM threshold_results "
        "WHERE run_id = ? AND NOT passed ORDER BY metric", [run_id]).fetchall()
    con.close()
    assert rows == [("ops_per_s", "min", 150.0, 100.0, False, False),
                    ("p99", "max", 1.5, summary["p99_ms"], False, False)]  # fmt: skip


def test_a_phase_that_measured_nothing_breaches_a_threshold_naming_it(tmp_path: Path) -> None:
    with phase_context(tmp_path, SCENARIO, INVENTORY) as (ctx, _synth, _a):
        checks = ThresholdChecks(list(ctx.plan.scenario.thresholds))
        verdicts = checks.phase_ended(ctx, "mix", "mix", (0.0, 5.0))
    # the two naming phase 'mix' are breached; the two for every phase skip a phase
    # without ops
    assert [v.line() for v in verdicts] == [
        "p99 of every op in phase mix <= 1.5 ms: nothing measured",
        "p99 of op read in phase mix <= 20 ms: nothing measured",
    ]


ABORT = """
name = "slo"
[[phases]]
name = "mix"
type = "run"
rate = 100
duration = "60s"

[[thresholds]]
phase = "mix"
metric = "p99"
max = 10
abort = true
abort_after = "2s"
"""


def test_abort_stops_the_run_on_a_live_breach(tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.setattr(threshold_checks, "LIVE_EVERY_S", 0.01)

    async def scenario(ctx) -> None:  # noqa: ANN001
        checks = ThresholdChecks(list(ctx.plan.scenario.thresholds))
        ctx.current_phase = "mix"
        task = checks.live(ctx, "mix", "mix")
        assert task is not None
        ctx.stats.add(interval_line(1000, "read", 100, 50_000, 0, phase="mix"))  # 50 ms
        await asyncio.sleep(0.1)
        assert not ctx.control.stop_requested.is_set()  # not before abort_after
        ctx.clock.now += 3.0
        await asyncio.wait_for(ctx.control.stop_requested.wait(), timeout=10)
        await checks.stop(task)
        assert checks.aborted is not None and checks.aborted.live
        assert ctx.control.reason.startswith("threshold breached: p99 of every op in phase mix "
                                             "<= 10 ms: breached, measured 50.")  # fmt: skip
        assert checks.breaches == [checks.aborted]

    with phase_context(tmp_path, ABORT, INVENTORY) as (ctx, _synth, _a):
        asyncio.run(scenario(ctx))
