"""store/curves.py: the curve points of a ramp and a search, the rate at target (a
search's answer, a ramp's interpolated), and `compare --curves` printing the same."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest

from loadtower.orchestrator.phases import ramp, search
from loadtower.store import StoreReader
from loadtower.store.curves import latency_curve, rates_at_target
from tests.orchestrator.phase_fixtures import INVENTORY, Second, phase_context
from tests.orchestrator.test_ramp_units import _StoringSink

SCENARIO = """
name = "curves"
[[phases]]
type = "ramp"
name = "sat"
rates = [100, 200, 300, 400]
step_duration = "5s"
target_p99_ms = 50
[[phases]]
type = "search"
name = "find"
min_rate = 50
max_rate = 1000
start_rate = 100
resolution = 20
step_duration = "5s"
target_p99_ms = 50
"""
LATENCY_US = {100: 5_000, 200: 40_000, 300: 200_000}


def _second(level: float, offset: int) -> Second:
    ms = LATENCY_US.get(int(level))
    if ms is None:
        ms = 5_000 if level <= 220 else 200_000
    return int(level), ms, 0


def _store(tmp_path: Path) -> tuple[Path, str, dict, dict]:
    with phase_context(tmp_path, SCENARIO, INVENTORY, _second) as (ctx, load, _a):
        load.sink = _StoringSink(ctx).add
        results = []
        for index, (name, handler) in enumerate((("sat", ramp), ("find", search))):
            ctx.current_phase = name
            phase = ctx.plan.scenario.phases[index]
            ctx.store.phase_started(ctx.run_id, index, name, phase.type, ctx.clock(),
                                    {"engine": "cassandra", "target_p99_ms": 50})
            result = asyncio.run(handler.run_phase(ctx, index, phase))  # type: ignore[attr-defined]
            ctx.store.phase_ended(ctx.run_id, index, ctx.clock(), result)
            results.append(result)
        run_id = ctx.run_id
    return tmp_path / "store.duckdb", run_id, results[0], results[1]


def test_curve_points_and_rates_at_target(tmp_path: Path) -> None:
    store, run_id, ramp_result, search_result = _store(tmp_path)
    curve = latency_curve(store, run_id)
    steps = ramp_result["steps"] + search_result["steps"]
    assert [p["label"] for p in curve] == [s["label"] for s in steps]
    assert [p["kind"] for p in curve] == ["ramp"] * 3 + ["search"] * len(search_result["steps"])
    summary = {r["phase"]: r for r in StoreReader(store).phase_summary(run_id)}
    for point in curve:  # the curve's figures are phase_summary's, step by step
        row = summary[point["label"]]
        assert (point["ops_per_s"], point["p50_ms"], point["p90_ms"], point["p99_ms"]) == (
            row["ops_per_s"], row["p50_ms"], row["p90_ms"], row["p99_ms"])
    sat, find = rates_at_target(store, run_id)
    # the ramp: p99 40 ms at 200 ops/s, 200 ms at 300: 50 ms lies at 200 + 100 * 10/160
    assert sat["source"] == "ramp: interpolated between sat@200 and sat@300"
    p200, p300 = curve[1]["p99_ms"], curve[2]["p99_ms"]
    assert sat["rate"] == pytest.approx(200 + 100 * (50 - p200) / (p300 - p200), abs=0.05)
    assert find["source"] == "search" and find["rate"] == search_result["found"]
    assert find["bracket"] == search_result["bracket"] and find["confirmed"] is True
    assert find["bracket"][0] <= 220 < find["bracket"][1]


def test_compare_curves_prints_the_same_figures(tmp_path: Path) -> None:
    store, run_id, _ramp, search_result = _store(tmp_path)
    argv = [sys.executable, "-m", "loadtower", "compare", run_id, "--curves", "--store",
            str(store)]
    out = subprocess.run([*argv, "--json"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    found = json.loads(out.stdout)
    points = [{k: v for k, v in p.items() if k != "system"} for p in found["curves"]]
    assert points == json.loads(json.dumps(latency_curve(store, run_id)))
    assert {p["system"] for p in found["curves"]} == {"cassandra"}
    assert [r["rate"] for r in found["at_target"]] == [
        r["rate"] for r in rates_at_target(store, run_id)]
    text = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert text.returncode == 0, text.stderr
    assert "Rate each system holds at its latency target" in text.stdout
    assert f"{search_result['found']:,.1f}" in text.stdout and "search" in text.stdout
