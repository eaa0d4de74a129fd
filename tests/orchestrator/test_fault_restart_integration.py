"""A `fault` phase that restarts the sandbox's only node under load, through SSH: the
inventory's `restart` action (stop, then start) runs, its output lands in the run's logs,
the failed ops are counted by class, and the load serves again once the node is back."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loadtower.store import StoreReader
from tests.orchestrator.run_helpers import only_run, run_scenario

pytestmark = [pytest.mark.integration, pytest.mark.alone,  # a node's restart inside a phase
              pytest.mark.timeout(600)]

SCENARIO = """
name = "restart-under-load"
[target]
keyspace = "lt_restart"
[dataset]
records = 2000
[workloads.reads]
preset = "ycsb-c"
[[phases]]
type = "load"
concurrency = 16
[[phases]]
type = "fault"
name = "restart"
host = "db1"
action = "restart"
after = "3s"
duration = "50s"
rate = 50
"""


def test_restart_fault_on_the_sandbox(sandbox: dict, tmp_path: Path) -> None:
    from loadtower.sandbox import Sandbox

    (tmp_path / "restart.toml").write_text(SCENARIO)
    store = tmp_path / "runs.duckdb"
    done = run_scenario(tmp_path / "restart.toml", Path(sandbox["dir"]) / "inventory.toml", store)
    ring = Sandbox(sandbox["dir"]).node("status", 1)
    assert f"UN  {sandbox['cassandra']['nodes'][0]['address']} " in ring, ring  # back up
    assert done.returncode == 0, done.stderr
    run = only_run(store)
    reader = StoreReader(store)
    phase = next(p for p in reader.phases(run["id"]) if p["name"] == "restart")
    result = phase["result"] if isinstance(phase["result"], dict) else json.loads(phase["result"])
    assert result["action"] == "restart" and result["exit_status"] == 0, result
    assert result["errors_before"] == 0 and result["errors_after"] > 0, result
    assert sum(result["errors_by_class_after"].values()) == result["errors_after"]

    _cols, logs = reader.sql(
        f"SELECT stream, text FROM logs WHERE run_id = '{run['id']}' AND host = 'db1' "
        "AND stream LIKE 'action:restart%'"
    )
    said = [text for stream, text in logs if stream == "action:restart"]
    assert said == ["node 1: stopped", "node 1: up"], logs  # the stop's line, then the start's

    # once the node is back, seconds with ops and no error again
    ended = next(e["ts"] for e in reader.events(run["id"])
                 if e["kind"] == "action" and "restart on db1: done" in e["message"])
    after = [r for r in reader.op_seconds(run["id"], "restart") if r["ts"] > ended + 5]
    assert any(r["ops"] > 0 and r["errors"] == 0 for r in after), after
