"""`search` on the sandbox through the real orchestrator (SSH, Locust master and
worker, the load core): the highest rate a 1-node Cassandra holds at p99 <= 50 ms,
found twice; and the built-in recipes-mix's search on Cassandra and ClickHouse in one
run, whose two curves and rates at target `compare` prints.

The answers depend on this shared machine's load: the tests check the search's
structure (bracket within the resolution, the confirmation at R passed, the step at
R_fail failed, the store's and compare's figures equal), never a rate. Near the knee
this machine's p99 is noisy (seen: 44.8 ms at 1,600 ops/s, 21.3 ms at 3,200), so a
confirmation can fail by noise and a search end unconfirmed, as it then says; such a
search's structure is checked too (every confirmation it ran failed, its bracket said
"wider than" the resolution when it is), and the test runs up to MAX_SEARCHES searches
until two are confirmed; one must be.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from loadtower.store import StoreReader
from loadtower.store.curves import latency_curve, rates_at_target
from tests.orchestrator.run_helpers import only_run, run_scenario

pytestmark = [pytest.mark.integration, pytest.mark.alone,  # p99 targets at each search step
              pytest.mark.timeout(600)]

RESOLUTION_PCT = 20
MAX_SEARCHES = 4  # until two are confirmed; one must be (see the module docstring)
MAX_CONFIRMATIONS = 3
SCENARIO = f"""
name = "search-test"
[target]
keyspace = "lt_search"
replication_factor = 1
[dataset]
records = 2000
[workloads.reads]
preset = "ycsb-b"
[[phases]]
type = "load"
concurrency = 16
[[phases]]
type = "search"
name = "find"
target_p99_ms = 50
min_rate = 10
start_rate = 400
max_rate = 100000
growth = 2.0
resolution_pct = {RESOLUTION_PCT}
step_duration = "4s"
max_steps = 16
max_confirmations = {MAX_CONFIRMATIONS}
"""


def _compare(store: Path, *args: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "loadtower", "compare", *args, "--store", str(store)]
    return subprocess.run(argv, capture_output=True, text=True, timeout=120)


def _search_once(sandbox: dict, tmp_path: Path, name: str) -> tuple[dict, dict, float]:
    scenario = tmp_path / f"{name}.toml"
    scenario.write_text(SCENARIO)
    store = tmp_path / f"{name}.duckdb"
    began = time.monotonic()
    done = run_scenario(scenario, Path(sandbox["inventory"]), store, timeout=400)
    took = time.monotonic() - began
    assert done.returncode == 0, done.stderr[-3000:]
    run = only_run(store)
    reader = StoreReader(store)
    phase = next(p for p in reader.phases(run["id"]) if p["name"] == "find")
    result = phase["result"]
    low, high = result["bracket"]
    steps = result["steps"]
    assert result["found"] == low and low is not None and high is not None, result
    assert any(s["level"] == high and not s["passed"] for s in steps), steps  # R_fail failed
    assert any(s["level"] == low and s["passed"] for s in steps), steps  # R passed
    within = high - low <= low * RESOLUTION_PCT / 100 + 1e-6
    assert result["within_resolution"] is within, result
    confirms = [s for s in steps if s["stage"] == "confirm"]
    if result["confirmed"]:  # a bracket [R, R_fail] within the resolution, R confirmed
        assert within, result
        last = steps[-1]
        assert last["stage"] == "confirm" and last["level"] == low and last["passed"], last
    else:  # ended by noise: every confirmation it ran failed (or its step budget went)
        assert not any(s["passed"] for s in confirms), confirms
        assert result["stop_reason"] in (f"{MAX_CONFIRMATIONS} confirmation steps failed",
                                         "step budget (16 steps) spent"), result
        assert len(confirms) == MAX_CONFIRMATIONS or len(steps) == 16, steps
    # one phase_summary row per step and op; the store's search_result row agrees
    summary = reader.phase_summary(run["id"])
    assert {s["label"] for s in steps} == {r["phase"] for r in summary if "@" in r["phase"]}
    [row] = reader.search_results(run["id"])
    assert (row["found_ops_per_s"], row["bracket_low"], row["bracket_high"]) == (low, low, high)
    assert row["confirmed"] is result["confirmed"] and row["steps"] == len(steps)
    assert row["target_p99_ms"] == 50 and row["resolution"] == f"{RESOLUTION_PCT}%"
    # the steps stream as events as they end, as a ramp's do
    events = [e for e in reader.events(run["id"]) if e["kind"] == "search_step"]
    assert len(events) == len(steps)
    # compare prints the same answer
    out = _compare(store, run["id"], "--curves", "--json")
    assert out.returncode == 0, out.stderr
    [answer] = json.loads(out.stdout)["at_target"]
    assert answer["rate"] == low and answer["source"] == "search"
    return result, row, took


def test_search_finds_the_rate_at_p99_50ms_twice(sandbox: dict, tmp_path: Path) -> None:
    confirmed, unconfirmed = [], []
    for attempt in range(MAX_SEARCHES):
        if len(confirmed) == 2:
            break
        found = _search_once(sandbox, tmp_path, f"search{attempt}")
        (confirmed if found[0]["confirmed"] else unconfirmed).append(found)
    # at least one confirmed (its structure checked); the figure compares two searches,
    # the confirmed ones when there are two
    assert confirmed, (
        f"all {MAX_SEARCHES} searches ended unconfirmed: "
        f"{[r['bracket'] for r, _row, _t in unconfirmed]}")
    (first, row1, took1), (second, row2, took2) = (confirmed + unconfirmed)[:2]
    a, b = first["found"], second["found"]
    spread = abs(a - b) / max(a, b)
    # the note's repeatability figure (printed with -s)
    print(
        f"\nsearch p99<=50ms on 1-node Cassandra: run 1 {a:g} ops/s bracket {first['bracket']} "
        f"({len(first['steps'])} steps, {row1['duration_s']:.0f} s, run {took1:.0f} s); "
        f"run 2 {b:g} ops/s bracket {second['bracket']} ({len(second['steps'])} steps, "
        f"{row2['duration_s']:.0f} s, run {took2:.0f} s); apart by {spread:.1%}; "
        f"{len(confirmed)} confirmed, {len(unconfirmed)} unconfirmed"
    )


def test_recipes_mix_search_gives_two_curves_and_rates(sandbox: dict, tmp_path: Path) -> None:
    ch = sandbox.get("clickhouse") or {}
    if not ch.get("enabled"):
        pytest.skip("the sandbox runs no ClickHouse host (chdb-core not importable?)")
    import clickhouse_connect

    database = "lt_search_two"
    client = clickhouse_connect.get_client(
        host=ch["address"], port=ch["port"], username=ch["username"], password=ch["password"]
    )
    try:
        client.command(f"DROP DATABASE IF EXISTS {database}")
        store = tmp_path / "two.duckdb"
        done = run_scenario(
            "recipes-mix", Path(sandbox["inventory"]), store,
            f"target.keyspace={database}", "dataset.records=500", "phases[0].concurrency=4",
            "phases[2].duration=4s", "phases[3].step_duration=4s", "phases[3].start_rate=20",
            "phases[3].resolution_pct=30", "phases[3].max_steps=6",
            timeout=500,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-3000:]
    finally:
        client.command(f"DROP DATABASE IF EXISTS {database}")
        client.close()
    run = only_run(store)
    curve = latency_curve(store, run["id"])
    assert {p["target"] for p in curve} == {"cassandra", "clickhouse"}
    for target in ("cassandra", "clickhouse"):
        points = [p for p in curve if p["target"] == target]
        assert points and all(p["phase"] == f"{target}:saturation" for p in points)
        assert all(p["ops_per_s"] is not None and p["p99_ms"] is not None for p in points)
    out = _compare(store, run["id"], "--curves", "--json")
    assert out.returncode == 0, out.stderr
    rates = {r["system"]: r for r in json.loads(out.stdout)["at_target"]}
    assert set(rates) == {"cassandra", "clickhouse"}
    stored = {r["target"]: r for r in rates_at_target(store, run["id"])}
    for system, row in rates.items():
        assert row["source"] == "search" and row["rate"] == stored[system]["rate"]
    text = _compare(store, run["id"])  # the engines table, then the curves and the rates
    assert text.returncode == 0, text.stderr
    assert "Rate each system holds at its latency target" in text.stdout
    print("\nrecipes-mix (test size):", {s: r["rate"] for s, r in rates.items()})
