"""`search` over a simulated system with a known knee: bracketing, bisection,
confirmation, resolution, bounds, all-fail and all-pass.

The pure part (search_plan.RateSearch) runs against a pass/fail function; the phase
handler runs on the synthetic load of phase_fixtures (real live stats, real HDR
histograms, a real store), whose latency jumps past the knee.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from loadtower.errors import ConfigError
from loadtower.orchestrator.headless_display import phase_notes, ramp_tables
from loadtower.orchestrator.phases import search
from loadtower.orchestrator.plan_duration import planned_seconds
from loadtower.orchestrator.search_plan import (
    BRACKET,
    CONFIRM,
    NARROW,
    RateSearch,
    SearchBounds,
)
from loadtower.scenarios.loader import load_scenario_text
from loadtower.store import StoreReader
from loadtower.store.curves import latency_curve, rates_at_target
from tests.orchestrator.phase_fixtures import INVENTORY, Second, phase_context
from tests.orchestrator.test_ramp_units import _StoringSink


def _drive(bounds: SearchBounds, passes: Callable[[float, int], bool]) -> RateSearch:
    """Run the search; `passes(rate, step_index)` says whether that step passes."""
    s = RateSearch(bounds)
    while (asked := s.next_rate()) is not None:
        s.record(asked[0], passes(asked[0], len(s.steps)))
    return s


@pytest.mark.parametrize("knee", [1.0, 37.0, 812.0, 999.0, 4321.0])
def test_finds_the_knee_within_an_absolute_resolution(knee: float) -> None:
    bounds = SearchBounds(min_rate=1, max_rate=5000, start_rate=50, resolution=10)
    s = _drive(bounds, lambda rate, _i: rate <= knee)
    low, high = s.bracket
    assert s.done and s.confirmed and s.found == low
    assert low is not None and high is not None
    assert low <= knee < high and high - low <= 10
    stages = [stage for _r, stage, _ok in s.steps]
    assert stages[-1] == CONFIRM and s.steps[-1][0] == low and s.steps[-1][2]
    # bracket steps come first, then bisection, then the one confirmation
    assert stages == sorted(stages, key=[BRACKET, NARROW, CONFIRM].index)
    # the failing end of the bracket was stepped and failed
    assert any(r == high and not ok for r, _st, ok in s.steps)


def test_brackets_by_growing_steps_then_bisects() -> None:
    bounds = SearchBounds(min_rate=10, max_rate=10_000, start_rate=100, resolution_pct=5)
    s = _drive(bounds, lambda rate, _i: rate <= 700)
    rates = [r for r, _st, _ok in s.steps]
    assert rates[:5] == [100, 200, 400, 800, 600]  # x2 until 800 fails, then halfway
    low, high = s.bracket
    assert low is not None and high is not None
    assert high - low <= low * 0.05 and low <= 700 < high


def test_a_first_step_that_fails_brackets_downwards() -> None:
    bounds = SearchBounds(min_rate=1, max_rate=1000, start_rate=800, resolution=5)
    s = _drive(bounds, lambda rate, _i: rate <= 90)
    assert [r for r, _st, _ok in s.steps][:5] == [800, 400, 200, 100, 50]
    assert s.found is not None and s.found <= 90 and s.confirmed


def test_all_pass_answers_the_max_rate_unbounded() -> None:
    bounds = SearchBounds(min_rate=10, max_rate=1000, start_rate=100, resolution=5)
    s = _drive(bounds, lambda _rate, _i: True)
    assert [r for r, _st, _ok in s.steps] == [100, 200, 400, 800, 1000]
    assert s.found == 1000 and s.bracket == [1000, None]
    assert "not bounded" in s.stop_reason and not s.confirmed


def test_all_fail_has_no_answer_and_stops_at_the_min_rate() -> None:
    bounds = SearchBounds(min_rate=10, max_rate=1000, start_rate=100, resolution=5)
    s = _drive(bounds, lambda _rate, _i: False)
    assert [r for r, _st, _ok in s.steps] == [100, 50, 25, 12.5, 10]
    assert s.found is None and s.bracket == [None, 10] and "min rate" in s.stop_reason


def test_a_failed_confirmation_narrows_below_and_confirms_again() -> None:
    bounds = SearchBounds(
        min_rate=1, max_rate=1000, start_rate=100, resolution=10, max_confirmations=3
    )
    first_confirmation: list[float] = []

    def passes(rate: float, _i: int) -> bool:
        if rate <= 300:
            return True
        if rate <= 340 and not first_confirmation:  # passed by luck until confirmed
            return True
        return False

    s = RateSearch(bounds)
    while (asked := s.next_rate()) is not None:
        rate, stage = asked
        ok = passes(rate, len(s.steps))
        if stage == CONFIRM and not first_confirmation:
            first_confirmation.append(rate)
            ok = False
        s.record(rate, ok)
    assert first_confirmation and first_confirmation[0] > 300
    assert s.confirmed and s.confirmations >= 2
    low, high = s.bracket
    assert low is not None and high is not None and low <= 300 < high <= first_confirmation[0]
    assert high - low <= 10


def test_confirmations_are_bounded() -> None:
    bounds = SearchBounds(
        min_rate=1, max_rate=1000, start_rate=100, resolution=10, max_confirmations=2
    )
    s = RateSearch(bounds)
    while (asked := s.next_rate()) is not None:
        rate, stage = asked
        s.record(rate, stage != CONFIRM and rate <= 300)  # every confirmation fails
    assert not s.confirmed and s.confirmations == 2
    assert "2 confirmation steps failed" in s.stop_reason


def test_the_step_budget_bounds_the_search() -> None:
    bounds = SearchBounds(min_rate=1, max_rate=100_000, start_rate=1, resolution=1, max_steps=6)
    s = _drive(bounds, lambda rate, _i: rate <= 5000)
    assert len(s.steps) == 6 and not s.confirmed and "step budget" in s.stop_reason
    assert s.found == 32  # the last pass of the bracketing


def test_without_confirmation_it_ends_within_the_resolution() -> None:
    bounds = SearchBounds(min_rate=1, max_rate=1000, start_rate=100, resolution=20, confirm=False)
    s = _drive(bounds, lambda rate, _i: rate <= 333)
    assert all(stage != CONFIRM for _r, stage, _ok in s.steps)
    assert s.stop_reason == "within the resolution" and not s.confirmed


# ------------------------------------------------------------------ the phase handler
def _scenario(more: str = "") -> str:
    return f"""
name = "search-units"
[[phases]]
type = "search"
name = "find"
min_rate = 10
max_rate = 2000
start_rate = 100
resolution = 25
step_duration = "5s"
target_p99_ms = 50
{more}
"""


def _run(tmp_path: Path, scenario: str, second: object) -> tuple[dict, list[dict], list[dict]]:
    with phase_context(tmp_path, scenario, INVENTORY, second) as (ctx, load, _a):  # type: ignore[arg-type]
        ctx.current_phase = "find"
        result = asyncio.run(search.run_phase(ctx, 0, ctx.plan.scenario.phases[0]))
        run_id = ctx.run_id
    events = StoreReader(tmp_path / "store.duckdb").events(run_id)
    return result, load.starts, events


KNEE = 730  # ops/s: past it the simulated database's p99 jumps to 120 ms


def _knee(level: float, offset: int) -> Second:
    return int(level), (4000 if level <= KNEE else 120_000), 0


def test_the_phase_finds_the_knee_with_a_label_per_step(tmp_path: Path) -> None:
    result, starts, events = _run(tmp_path, _scenario(), _knee)
    low, high = result["bracket"]
    assert low <= KNEE < high and high - low <= 25
    assert result["found"] == low and result["confirmed"]
    assert result["resolution"] == "25 ops/s"
    assert result["target"].startswith("p99 <= 50 ms")
    steps = result["steps"]
    assert [s["rate"] for s in starts] == [s["level"] for s in steps]
    assert [s["phase"] for s in starts] == [s["label"] for s in steps]
    assert steps[0]["label"] == "find@100" and steps[-1]["stage"] == "confirm"
    assert steps[-1]["label"] == f"find@{low:g}#{len(steps)}"  # a rate asked again
    assert result["found_ops_per_s"] == steps[-1]["ops_per_s"] == pytest.approx(low)
    failing = [s for s in steps if s["level"] == high]
    assert failing and not failing[0]["passed"] and failing[0]["why"].startswith("p99 ")
    assert len([e for e in events if e["kind"] == "search_step"]) == len(steps)
    [done] = [e for e in events if e["kind"] == "search_result"]
    assert "confirmed" in done["message"] and f"{low:g} ops/s" in done["message"]
    # the headless run's note and table (headless_display)
    [note] = phase_notes({"find": result})
    assert note.startswith("find: highest rate meeting p99 <= 50 ms") and "confirmed" in note
    assert f"bracket [{low:,.1f}, {high:,.1f}] within 25 ops/s" in note
    [table] = ramp_tables({"find": result})
    assert table.row_count == len(steps) and str(table.title).startswith("Search find")


def test_a_search_ended_by_failed_confirmations_says_how_wide_its_bracket_is(
        tmp_path: Path) -> None:
    """Every rate asked a second time fails (noise past the target, as on a busy
    machine): the search ends unconfirmed, and its event and note say "wider than" the
    resolution when the bracket is (each failed confirmation lowered its top), never
    "within" it."""
    asked: dict[float, int] = {}

    def second(level: float, offset: int) -> Second:
        if offset == 0:
            asked[level] = asked.get(level, 0) + 1
        passes = level <= KNEE and asked[level] == 1
        return int(level), (4000 if passes else 120_000), 0

    result, _starts, events = _run(tmp_path, _scenario(), second)
    low, high = result["bracket"]
    assert result["confirmed"] is False and "confirmation steps failed" in result["stop_reason"]
    assert high - low > 25 and result["within_resolution"] is False, result["bracket"]
    [done] = [e for e in events if e["kind"] == "search_result"]
    assert "] wider than 25 ops/s, NOT confirmed" in done["message"], done["message"]
    [note] = phase_notes({"find": result})
    assert "] wider than 25 ops/s, NOT confirmed" in note, note


def test_a_step_that_cannot_keep_up_fails(tmp_path: Path) -> None:
    def capped(level: float, offset: int) -> Second:
        return min(int(level), 500), 3000, 0  # good latency, but at most 500 ops/s

    result, _starts, _events = _run(tmp_path, _scenario(), capped)
    low, high = result["bracket"]
    assert low <= 500 / 0.95 < high
    failed = next(s for s in result["steps"] if not s["passed"])
    assert failed["why"].startswith("achieved ") and "of " in failed["why"]


def test_p999_target(tmp_path: Path) -> None:
    scenario = _scenario().replace("target_p99_ms = 50", "target_p999_ms = 50")
    result, _starts, _events = _run(tmp_path, scenario, _knee)
    assert result["bracket"][0] <= KNEE < result["bracket"][1]
    assert result["target_p99_ms"] is None and result["target_p999_ms"] == 50


def test_the_search_result_row_and_the_curve(tmp_path: Path) -> None:
    with phase_context(tmp_path, _scenario(), INVENTORY, _knee) as (ctx, load, _a):  # type: ignore[arg-type]
        load.sink = _StoringSink(ctx).add  # lines to the live stats and the store
        ctx.current_phase = "find"
        params = {"engine": "cassandra"}
        ctx.store.phase_started(ctx.run_id, 0, "find", "search", ctx.clock(), params)
        result = asyncio.run(search.run_phase(ctx, 0, ctx.plan.scenario.phases[0]))
        ctx.store.phase_ended(ctx.run_id, 0, ctx.clock(), result)
        run_id = ctx.run_id
    store = tmp_path / "store.duckdb"
    [row] = StoreReader(store).search_results(run_id)
    assert row["phase"] == "find" and row["found_ops_per_s"] == result["found"]
    assert [row["bracket_low"], row["bracket_high"]] == result["bracket"]
    assert row["steps"] == len(result["steps"]) and row["confirmed"] is True
    assert row["target_p99_ms"] == 50 and row["resolution"] == "25 ops/s"
    assert row["duration_s"] == pytest.approx(5 * len(result["steps"]), abs=1)
    curve = latency_curve(store, run_id)
    assert [p["label"] for p in curve] == [s["label"] for s in result["steps"]]
    assert [p["passed"] for p in curve] == [s["passed"] for s in result["steps"]]
    assert all(p["phase"] == "find" and p["target"] == "cassandra" for p in curve)
    for point, step in zip(curve, result["steps"], strict=True):  # live = stored figures
        assert point["ops_per_s"] == step["ops_per_s"] and point["level"] == step["level"]
        assert (point["p50_ms"], point["p99_ms"]) == (step["p50_ms"], step["p99_ms"])
    [answer] = rates_at_target(store, run_id)
    assert answer["source"] == "search" and answer["rate"] == result["found"]
    stored = json.loads(json.dumps(result))  # the phases row holds the same result
    assert stored["found"] == row["found_ops_per_s"]


def test_config_errors_name_the_key(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="target_p99_ms"):
        load_scenario_text(_scenario().replace("target_p99_ms = 50", ""), "s.toml")
    with pytest.raises(ConfigError, match="min_rate"):
        load_scenario_text(_scenario().replace("min_rate = 10", "min_rate = 5000"), "s.toml")
    with pytest.raises(ConfigError, match="not both"):
        load_scenario_text(_scenario("resolution_pct = 5"), "s.toml")
    with pytest.raises(ConfigError, match="at least 3s"):
        load_scenario_text(_scenario().replace('"5s"', '"2s"'), "s.toml")


def test_the_plan_counts_the_expected_steps(tmp_path: Path) -> None:
    scenario = load_scenario_text(_scenario(), "s.toml")
    seconds, exact = planned_seconds(scenario.phases[0])
    assert not exact and seconds >= 5 * 5 and seconds % 5 == 0
