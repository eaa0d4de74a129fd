"""Verdicts across runs on the sandbox (issue 32): runs of one scenario that match are
not a regression; the same scenario with the same settings against a Cassandra node whose
CPU is capped (a cgroup v1 cpu quota) is one, for `compare --json` and `history --json`.
(The thresholds' exit codes: test_thresholds_integration.py, not `alone`.)

The runs' measured phase is a CLOSED model (4 users, each 20 ms between ops): the capped
node then cuts the throughput as well as raising the p99, and a throughput's per-second
series keeps enough effective samples in 20 s to give a verdict, where a 20 s p99 may not
(store/significance.py: a baseline's tail that bunches in one slow spell of a shared
machine leaves too few effective samples, and "too short to tell" is then the honest
answer; that is seen, docs/statistics.md).
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from loadtower.store import StoreReader
from tests.orchestrator.run_helpers import run_scenario

pytestmark = [pytest.mark.integration, pytest.mark.alone,  # verdicts on runs' figures; a capped node
              pytest.mark.timeout(1200)]

# The scenario of the history runs: a small load, then the closed-model phase (see above),
# as long as compare needs to give a verdict rather than "too short to tell" (at least 10 s
# and 5 effective samples per side: 20 s of a steady closed loop had 12-22 for ops/s here)
HISTORY_SCENARIO = """
name = "history-check"
engine = "cassandra"

[target]
keyspace = "lt_history_check"
replication_factor = 1
consistency = "LOCAL_QUORUM"

[dataset]
records = 1000
fields = 10
field_size = 100

[workloads.main]
preset = "ycsb-a"

[[phases]]
type = "load"
concurrency = 16

[[phases]]
type = "run"
name = "ycsb-a"
duration = "20s"
users = 4
think_time = "20ms"
"""
BASELINE_RUNS = 3  # a new level after a single run needs a few runs before it to stand out
# the slowed Cassandra node: 10% of one CPU, given as 0.1 s in each 1 s period, so it
# stalls up to 0.9 s at a time (every op waiting then is late) yet still takes new
# connections (2% of a CPU in 0.1 s periods was too little to connect the agents)
CPU_QUOTA, CPU_PERIOD_US = 0.1, 1_000_000
CPU_ROOT = Path("/sys/fs/cgroup/cpu")


def _cli(*args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "loadtower", *args], capture_output=True,
                          text=True, timeout=timeout)  # fmt: skip


def _cassandra_pid(sandbox: dict) -> int:
    state = json.loads((Path(sandbox["dir"]) / "state.json").read_text())
    node = next(n for n in state["nodes"].values() if not n.get("standby"))
    process = node.get("process") or {}
    pid = int(process.get("pid") or 0)
    assert pid > 0 and Path(f"/proc/{pid}").exists(), f"no running Cassandra node: {node}"
    return pid


def _cpu_cgroup_of(pid: int) -> Path:
    for line in Path(f"/proc/{pid}/cgroup").read_text().splitlines():
        _n, controllers, path = line.split(":", 2)
        if "cpu" in controllers.split(","):
            return CPU_ROOT / path.lstrip("/")
    return CPU_ROOT


@contextlib.contextmanager
def cpu_capped(pid: int, share: float, period_us: int) -> Iterator[None]:
    """`pid` (every thread of it) in a cgroup of its own whose CPU quota is `share` of
    one CPU in periods of `period_us`; moved back where it was, and the cgroup removed,
    however the block ends."""
    home = _cpu_cgroup_of(pid)
    capped = CPU_ROOT / f"loadtower-test-slow-{os.getpid()}"
    capped.mkdir()
    try:
        (capped / "cpu.cfs_period_us").write_text(str(period_us))
        (capped / "cpu.cfs_quota_us").write_text(str(int(period_us * share)))
        (capped / "cgroup.procs").write_text(str(pid))
        yield
    finally:
        with contextlib.suppress(ProcessLookupError, OSError):
            (home / "cgroup.procs").write_text(str(pid))
        capped.rmdir()


@pytest.fixture(scope="module")
def history_runs(sandbox: dict, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """BASELINE_RUNS runs of HISTORY_SCENARIO, then one more against the capped node."""
    folder = tmp_path_factory.mktemp("history-runs")
    store, scenario = folder / "runs.duckdb", folder / "history-check.toml"
    scenario.write_text(HISTORY_SCENARIO)
    inventory = Path(sandbox["dir"]) / "inventory.toml"
    for _ in range(BASELINE_RUNS):
        done = run_scenario(scenario, inventory, store)
        assert done.returncode == 0, done.stderr[-3000:]
    with cpu_capped(_cassandra_pid(sandbox), CPU_QUOTA, CPU_PERIOD_US):
        done = run_scenario(scenario, inventory, store)
    assert done.returncode == 0, done.stderr[-3000:]
    runs = [r["id"] for r in StoreReader(store).runs()]
    assert len(runs) == BASELINE_RUNS + 1
    return {"store": store, "runs": runs}


def _compare(store: Path, run_a: str, run_b: str) -> list[dict]:
    done = _cli("compare", run_a, run_b, "--store", str(store), "--json")
    assert done.returncode == 0, done.stderr
    return [r for r in json.loads(done.stdout) if r["phase"] == "ycsb-a"]


def test_history_flags_the_slowed_run_as_a_regression(history_runs: dict) -> None:
    store, runs = history_runs["store"], history_runs["runs"]
    done = _cli("history", "history-check", "--store", str(store), "--json")
    assert done.returncode == 0, done.stderr
    history = json.loads(done.stdout)
    assert history["phase"] == "ycsb-a" and history["metric"] == "p99"
    assert [r["id"] for r in history["runs"]] == runs
    assert not any(r["differs"] for r in history["runs"])  # one scenario, same settings
    figures = [r["value"] for r in history["runs"]]
    assert [(c["run_id"], c["direction"]) for c in history["change_points"]] == [
        (runs[-1], "regression")
    ], figures
    table = _cli("history", "history-check", "--store", str(store))
    assert table.returncode == 0 and "regression +" in table.stdout


def test_compare_finds_no_regression_between_matching_runs(history_runs: dict) -> None:
    """sig's verdicts (issue 32): ops_verdict / p99_verdict on each compare row."""
    store, runs = history_runs["store"], history_runs["runs"]
    rows = _compare(store, runs[1], runs[2])  # two warm runs (the first made the keyspace)
    assert rows
    assert all(r["p99_verdict"] != "regression" for r in rows), rows


def test_compare_flags_the_slowed_run_as_a_regression(history_runs: dict) -> None:
    store, runs = history_runs["store"], history_runs["runs"]
    rows = _compare(store, runs[-2], runs[-1])
    assert rows and all(r["ops_verdict"] == "regression" for r in rows), rows  # fewer ops/s
    assert all(r["p99_verdict"] in ("regression", "too short to tell") for r in rows), rows
