"""`ramp` on synthetic seconds: where it stops, and which step it reports.

The load is synthetic (phase_fixtures.SyntheticLoad), the live stats real: per-second
interval lines with HDR histograms, merged as in a run.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from loadtower.errors import ConfigError
from loadtower.orchestrator.phases import ramp
from loadtower.scenarios.loader import load_scenario_text
from loadtower.store import StoreReader
from loadtower.store.ramp_steps import ramp_of, step_label
from tests.orchestrator.phase_fixtures import INVENTORY, Second, phase_context


def _scenario(steps: str, more: str = "") -> str:
    return f"""
name = "ramp-units"
[[phases]]
type = "ramp"
{steps}
step_duration = "10s"
target_p99_ms = 50
{more}
"""


def _run(tmp_path: Path, scenario: str, second: object) -> tuple[dict, list[dict], list[dict]]:
    with phase_context(tmp_path, scenario, INVENTORY, second) as (ctx, load, _actions):  # type: ignore[arg-type]
        result = asyncio.run(ramp.run_phase(ctx, 0, ctx.plan.scenario.phases[0]))
        run_id = ctx.run_id
    events = StoreReader(tmp_path / "store.duckdb").events(run_id)
    return result, load.starts, events


def test_stops_at_the_first_step_over_the_p99_target(tmp_path: Path) -> None:
    latency_ms = {100: 5, 200: 12, 300: 80, 400: 90}

    def second(level: float, offset: int) -> Second:
        return int(level), latency_ms[int(level)] * 1000, 0

    result, starts, events = _run(tmp_path, _scenario("rates = [100, 200, 300, 400]"), second)
    assert [s["level"] for s in result["steps"]] == [100, 200, 300]
    assert [s["passed"] for s in result["steps"]] == [True, True, False]
    assert [s["rate"] for s in starts] == [100, 200, 300]  # 400 never started
    assert all(s["users"] is None for s in starts)
    assert result["steps"][0]["p99_ms"] == pytest.approx(5, rel=0.01)
    assert [s["label"] for s in result["steps"]] == ["p@100", "p@200", "p@300"]
    assert [s["phase"] for s in starts] == ["p@100", "p@200", "p@300"]  # a label per step
    assert [s["achieved_ops_per_s"] for s in result["steps"]] == [100.0, 200.0, 300.0]
    assert result["steps"][2]["why"] == result["stop_reason"]
    assert result["best_level"] == 200 and result["highest_passing_level"] == 200
    assert result["highest_passing_ops_per_s"] == 200.0
    assert result["first_failing_level"] == 300
    assert result["stop_reason"].startswith("p99 ") and "> 50 ms" in result["stop_reason"]
    steps = [e["message"] for e in events if e["kind"] == "ramp_step"]
    assert len(steps) == 3 and "FAILED (p99" in steps[2]
    [done] = [e["message"] for e in events if e["kind"] == "ramp_result"]
    assert "200.0 ops/s (step 2 at 200 ops/s)" in done


def test_stops_at_the_first_step_over_the_error_rate(tmp_path: Path) -> None:
    def second(level: float, offset: int) -> Second:
        errors = 0 if level < 200 else int(level * 0.05)  # 5 % > the default 1 %
        return int(level) - errors, 2000, errors

    result, starts, _ = _run(tmp_path, _scenario("rates = [100, 200, 300]"), second)
    assert [s["passed"] for s in result["steps"]] == [True, False]
    assert len(starts) == 2
    failed = result["steps"][1]
    assert failed["p99_ms"] < 50 and failed["error_rate"] == pytest.approx(0.05)
    assert result["stop_reason"] == "error rate 5.00% > 1.00%"
    assert result["best_level"] == 100 and result["first_failing_level"] == 200


def test_users_steps_report_the_highest_throughput_not_the_last_passing_step(
    tmp_path: Path,
) -> None:
    """Closed model: past 8 users the database serves fewer ops/s, yet p99 still passes
    at 16; the saturation figure is the 8 users' 700 ops/s."""
    served = {4: (400, 8), 8: (700, 11), 16: (650, 30), 32: (600, 200)}

    def second(level: float, offset: int) -> Second:
        ops, p99_ms = served[int(level)]
        return ops, p99_ms * 1000, 0

    result, starts, _ = _run(tmp_path, _scenario("users = [4, 8, 16, 32]"), second)
    assert [s["users"] for s in starts] == [4, 8, 16, 32]
    assert all(s["rate"] is None for s in starts)
    assert [s["passed"] for s in result["steps"]] == [True, True, True, False]
    assert result["unit"] == "users"
    assert result["best_step"] == 2 and result["best_level"] == 8
    assert result["highest_passing_ops_per_s"] == 700.0
    assert result["highest_passing_level"] == 16  # the last step that passed
    assert result["first_failing_level"] == 32


def test_every_step_passing_reports_the_best_and_no_failure(tmp_path: Path) -> None:
    def second(level: float, offset: int) -> Second:
        return int(level) if level != 300 else 250, 3000, 0  # 300 asked, 250 served

    result, _starts, _ = _run(tmp_path, _scenario("rates = [100, 300, 280]"), second)
    assert all(s["passed"] for s in result["steps"])
    assert result["best_level"] == 280 and result["highest_passing_ops_per_s"] == 280.0
    assert result["first_failing_level"] is None and result["stop_reason"] is None


def test_a_step_without_ops_fails_with_its_reason(tmp_path: Path) -> None:
    result, _starts, _ = _run(tmp_path, _scenario("rates = [100]"), lambda level, offset: (0, 0, 0))
    assert result["steps"][0]["reason"] == "no ops in the step"
    assert result["best_level"] is None and result["highest_passing_ops_per_s"] is None


@pytest.mark.parametrize("duration", ['"2s"', '"500ms"', "1"])
def test_a_step_too_short_to_judge_is_refused_naming_the_key(duration: str) -> None:
    text = _scenario("rates = [10]").replace('step_duration = "10s"', f"step_duration = {duration}")
    with pytest.raises(ConfigError) as caught:
        load_scenario_text(text, "s.toml")
    message = str(caught.value)
    assert message.startswith("s.toml:6: key 'phases[0].step_duration': ")
    assert "at least 3s" in message


def test_a_level_asked_twice_gets_a_label_of_its_own() -> None:
    taken: set[str] = set()
    labels = []
    for number, level in enumerate([40, 50, 40], start=1):
        labels.append(step_label("saturation", level, number, taken))
        taken.add(labels[-1])
    assert labels == ["saturation@40", "saturation@50", "saturation@40#3"]
    assert ramp_of("saturation@40#3", {"saturation", "load"}) == "saturation"
    assert ramp_of("cassandra:saturation@50", {"cassandra:saturation"}) == "cassandra:saturation"
    assert ramp_of("a@b", {"load"}) is None and ramp_of("load", {"load"}) is None


def test_a_steps_backlog_stays_in_its_step_and_the_store_agrees(tmp_path: Path) -> None:
    """The 300/s step leaves 40 ops that complete 1-2 s after its stop: they are counted
    in that step (its label), not in the next one; the result, phase_summary and
    StoreReader.ramp_steps give each step the same ops and ops/s."""

    def second(level: float, offset: int) -> Second:
        return int(level), 3000, 0

    scenario = _scenario("rates = [100, 300, 280]")
    with phase_context(tmp_path, scenario, INVENTORY, second) as (ctx, load, _actions):
        sinks_like = _StoringSink(ctx)
        load.sink = sinks_like.add
        load.late = [(1, (25, 20_000, 0)), (2, (15, 30_000, 0))]
        result = asyncio.run(ramp.run_phase(ctx, 0, ctx.plan.scenario.phases[0]))
        ctx.store.phase_started(ctx.run_id, 0, "p", "ramp", 1_000_000.0, {})
        ctx.store.phase_ended(ctx.run_id, 0, 1_000_031.0, result)
        run_id = ctx.run_id
    steps = result["steps"]
    assert [s["ops"] for s in steps] == [1000 + 40, 3000 + 40, 2800 + 40]
    reader = StoreReader(tmp_path / "store.duckdb")
    stored = {(r["phase"], r["op"]): r for r in reader.phase_summary(run_id)}
    assert set(stored) == {(s["label"], "read") for s in steps}  # one row per step
    for s in steps:
        row = stored[(s["label"], "read")]
        assert (row["ops"], row["ops_per_s"], row["errors"]) == (
            s["ops"], s["achieved_ops_per_s"], s["errors"]
        )
        assert (row["p50_ms"], row["p90_ms"], row["p99_ms"]) == (s["p50_ms"], s["p90_ms"], s["p99_ms"])
    rows = reader.ramp_steps(run_id)
    assert [(r["label"], r["asked"], r["passed"]) for r in rows] == [
        (s["label"], s["asked"], s["passed"]) for s in steps
    ]
    assert [r["achieved_ops_per_s"] for r in rows] == [s["achieved_ops_per_s"] for s in steps]
    assert [r["ops"] for r in rows] == [s["ops"] for s in steps]


class _StoringSink:
    """Lines to the live stats and the store, as Sinks.interval does."""

    def __init__(self, ctx: object) -> None:
        self.ctx = ctx

    def add(self, line: dict) -> None:
        self.ctx.stats.add(line)  # type: ignore[attr-defined]
        self.ctx.store.add_interval(self.ctx.run_id, line)  # type: ignore[attr-defined]
