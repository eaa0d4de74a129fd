"""A Cassandra node paused (SIGSTOP/SIGCONT, from outside) and killed (a `fault` phase)
under load, in the tests' 2-node sandbox (`ring2` in tests/conftest.py), through real
SSH; node 2 is started again afterwards.

The keyspace has replication factor 1, so about half the keys live only on node 2:
while it is paused their ops wait (latency) or time out (errors by class); once it
is killed they fail (errors by class). The run must complete either way. A second
`fault` phase starts node 2 again and a last run phase shows the cluster whole.

(The phase after the restart is not run while node 2 is still dead: the sandbox's
system_auth keyspace has replication factor 1, so with the node holding the role
dead, the schema statements every phase starts with are refused as Unauthorized.)
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from loadtower.store import StoreReader
from tests.reliability.fault_run import BackgroundRun, events

pytestmark = [pytest.mark.integration, pytest.mark.alone,  # a paused then killed node
              pytest.mark.timeout(900)]

RATE = 150
PAUSE_S = 10.0
SCENARIO = f"""
name = "db-fault"
[target]
keyspace = "lt_db_fault"
replication_factor = 1
[dataset]
records = 2000
[workloads.main]
preset = "ycsb-a"
[[phases]]
type = "load"
[[phases]]
type = "run"
name = "outside"
rate = {RATE}
duration = "40s"
[[phases]]
type = "fault"
name = "kill-db2"
host = "db2"
action = "kill"
after = "5s"
duration = "20s"
rate = {RATE}
[[phases]]
type = "fault"
name = "restart-db2"
host = "db2"
action = "start"
duration = "1s"
[[phases]]
type = "pause"
duration = "10s"
[[phases]]
type = "run"
name = "after"
rate = {RATE}
duration = "10s"
"""


def _node(sandbox: dict, action: str, index: int) -> None:
    argv = [sys.executable, "-m", "loadtower", "sandbox", "node", action, "--dir"]
    subprocess.run([*argv, sandbox["dir"], str(index)], check=True, timeout=360,
                   capture_output=True)


def _classes(reader: StoreReader, run_id: str, t0: float, t1: float) -> dict[str, int]:
    _cols, rows = reader.sql(
        "SELECT errors_by_class FROM op_intervals WHERE run_id = "
        f"'{run_id}' AND ts >= {int(t0)} AND ts <= {int(t1)} AND errors > 0"
    )
    classes: dict[str, int] = {}
    for (text,) in rows:
        for name, count in json.loads(text).items():
            classes[name] = classes.get(name, 0) + int(count)
    return classes


def _worst_ms(reader: StoreReader, run_id: str, t0: float, t1: float) -> float:
    rows = [r for r in reader.op_seconds(run_id) if t0 <= r["ts"] <= t1 and r["ops"]]
    return max((r["max_ms"] or 0.0 for r in rows), default=0.0)


def _active(info: dict) -> dict[int, dict]:
    return {n["index"]: n for n in info["cassandra"]["nodes"] if not n["standby"]}


def test_a_paused_then_killed_node_shows_as_errors_and_latency_and_the_run_completes(
    ring2: dict, tmp_path: Path
) -> None:
    sandbox = ring2
    nodes = _active(sandbox)
    pid = int(nodes[2]["pid"])
    scenario = tmp_path / "db-fault.toml"
    scenario.write_text(SCENARIO)
    store = tmp_path / "runs.duckdb"
    run = BackgroundRun(scenario, Path(sandbox["dir"]) / "inventory.toml", store, tmp_path)
    paused = False
    try:
        outside = run.wait_for("the outside phase", run.phase_started("outside"), 240)
        time.sleep(max(0.0, outside["started"] + 10 - time.time()))
        os.kill(pid, signal.SIGSTOP)  # from outside loadtower
        paused, paused_at = True, time.time()
        time.sleep(PAUSE_S)
        os.kill(pid, signal.SIGCONT)
        paused, resumed_at = False, time.time()
        assert run.finish(400) == 0, run.log_tail()
    finally:
        if paused:
            os.kill(pid, signal.SIGCONT)
        run.stop()
        _node(sandbox, "start", 2)  # the fault phase killed it; later tests need it

    reader = StoreReader(store)
    row = reader.run(run.run_id)
    assert row["status"] == "completed", row["reason"]

    # the pause: ops owned by node 2 waited (latency) or timed out (errors by class)
    pause_classes = _classes(reader, run.run_id, paused_at, resumed_at + 3)
    pause_worst = _worst_ms(reader, run.run_id, paused_at, resumed_at + 3)
    print(f"pause: worst {pause_worst:.0f} ms, errors {pause_classes}")
    assert pause_worst >= 2000 or pause_classes
    # and it recovered: the last 10 s of the phase ran without errors at normal latency
    end = next(p for p in reader.phases(run.run_id) if p["name"] == "outside")["started"] + 40
    calm = [r for r in reader.op_seconds(run.run_id, "outside") if end - 10 <= r["ts"] < end - 1]
    assert calm and sum(r["errors"] for r in calm) == 0 and max(r["p99_ms"] for r in calm) < 1000

    # the kill, by the fault phase: the action ran, errors after it, counted by class
    fault = next(p for p in reader.phases(run.run_id) if p["name"] == "kill-db2")
    result = fault["result"]
    result = json.loads(result) if isinstance(result, str) else result
    print(f"kill: {result}")
    assert result["exit_status"] == 0
    assert result["errors_before"] == 0 and result["errors_after"] > 0
    assert result["errors_by_class_after"] and sum(result["errors_by_class_after"].values()) == (
        result["errors_after"]
    )
    kill_classes = _classes(reader, run.run_id, fault["started"] + 5, fault["ended"])
    assert set(kill_classes) == set(result["errors_by_class_after"])
    # each error class got an event when it first appeared
    announced = {json.loads(e["data"])["error"] if isinstance(e["data"], str) else e["data"]["error"]
                 for e in events(reader, run.run_id, "errors")}
    assert set(kill_classes) <= announced
    # node 2 started again by the next fault phase: the last phase runs clean
    restart = next(p for p in reader.phases(run.run_id) if p["name"] == "restart-db2")
    restarted = restart["result"]
    restarted = json.loads(restarted) if isinstance(restarted, str) else restarted
    assert restarted["exit_status"] == 0
    after = [r for r in reader.phase_summary(run.run_id) if r["phase"] == "after"]
    assert sum(r["ops"] for r in after) >= 0.8 * RATE * 10
    assert sum(r["errors"] for r in after) == 0
    # which nodes coordinated the last phase's ops (coordinators.py): both nodes of the
    # ring (token-aware routing, RF 1), between them the agents' ops
    [record] = [e for e in events(reader, run.run_id, "coordinators") if e["phase"] == "after"]
    counts = json.loads(record["data"]) if isinstance(record["data"], str) else record["data"]
    ops = sum(r["ops"] for r in after)
    print(f"coordinators after: {counts}, agents' ops {ops}")
    assert set(counts) >= {"db1", "db2"} and counts["db1"] > 0 and counts["db2"] > 0
    assert ops <= sum(counts.values()) <= ops * 1.05
