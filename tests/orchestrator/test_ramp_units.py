"""`ramp` on synthetic seconds: where it stops, and which step it reports.

The load is synthetic (phase_fixtures.SyntheticLoad), the live stats real: per-second
interval lines with HDR histograms, merged as in a run.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from loadtower.errors import ConfigError
from loadtower.scenarios.loader import load_scenario_text
from loadtower.scenarios.orchestrator.phases import ramp
from loadtower.store import StoreReader
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


def _settling(ok: int, latency_us: int, errors: int = 0) -> Second:
    return ok, latency_us, errors


def test_stops_at_the_first_step_over_the_p99_target(tmp_path: Path) -> None:
    latency_ms = {100: 5, 200: 12, 300: 80, 400: 90}

    def second(level: float, offset: int) -> Second:
        if offset == 0:  # the settling second is slow: it must not be judged
            return _settling(int(level), 500_000)
        return int(level), latency_ms[int(level)] * 1000, 0

    result, starts, events = _run(tmp_path, _scenario("rates = [100, 200, 300, 400]"), second)
    assert [s["level"] for s in result["steps"]] == [100, 200, 300]
    assert [s["passed"] for s in result["steps"]] == [True, True, False]
    assert [s["rate"] for s in starts] == [100, 200, 300]  # 400 never started
    assert all(s["users"] is None for s in starts)
    assert result["steps"][0]["p99_ms"] == pytest.approx(5, rel=0.01)
    assert result["steps"][0]["judged_seconds"] >= 8
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
    assert result["steps"][0]["reason"] == "no ops in the judged seconds"
    assert result["best_level"] is None and result["highest_passing_ops_per_s"] is None


@pytest.mark.parametrize("duration", ['"2s"', '"500ms"', "1"])
def test_a_step_too_short_to_judge_is_refused_naming_the_key(duration: str) -> None:
    text = _scenario("rates = [10]").replace('step_duration = "10s"', f"step_duration = {duration}")
    with pytest.raises(ConfigError) as caught:
        load_scenario_text(text, "s.toml")
    message = str(caught.value)
    assert message.startswith("s.toml:6: key 'phases[0].step_duration': ")
    assert "at least 3s" in message


def test_the_judged_window_of_the_shortest_step_is_not_empty() -> None:
    for tenth in range(10):
        start = 1000 + tenth / 10
        first, end = ramp.judged_seconds(start, start + 3.0)
        assert end - first >= 1, start
