"""A partition of db3 (dc2) as fault phases: `partition` takes its DATA link down (SSH
over MGMT keeps working, so the `heal` action can be sent), ops fail by class, and
after `heal` the load is served again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loadtower.store import StoreReader
from tests.cluster.conftest import FirstRun
from tests.orchestrator.run_helpers import only_run, run_scenario

pytestmark = [pytest.mark.integration, pytest.mark.alone,  # a partition and a heal timed by gossip
              pytest.mark.timeout(900)]

SCENARIO = """
name = "partition-db3"
[target]
keyspace = "lt_partition"
local_dc = "dc1"
consistency = "ONE"
[dataset]
records = 2000
[workloads.reads]
preset = "ycsb-c"
[[phases]]
type = "load"
concurrency = 16
[[phases]]
type = "fault"
name = "partition"
host = "db3"
action = "partition"
after = "2s"
duration = "20s"
rate = 100
[[phases]]
type = "fault"
name = "heal"
host = "db3"
action = "heal"
after = "1s"
duration = "40s"
rate = 100
"""


def _result(reader: StoreReader, run_id: str, name: str) -> dict:
    phase = next(p for p in reader.phases(run_id) if p["name"] == name)
    return json.loads(phase["result"]) if isinstance(phase["result"], str) else phase["result"]


def test_partition_then_heal_of_db3(cluster: dict, first_run: FirstRun, tmp_path: Path) -> None:
    (tmp_path / "partition.toml").write_text(SCENARIO)
    store = tmp_path / "runs.duckdb"
    done = run_scenario(tmp_path / "partition.toml", Path(cluster["dir"]) / "inventory.toml", store)
    assert done.returncode == 0, done.stderr[-3000:]
    reader = StoreReader(store)
    run_id = only_run(store)["id"]
    cut = _result(reader, run_id, "partition")
    assert cut["exit_status"] == 0 and cut["errors_before"] == 0, cut
    assert cut["errors_after"] > 0, cut  # db3's replicas unreachable
    assert sum(cut["errors_by_class_after"].values()) == cut["errors_after"], cut
    healed = _result(reader, run_id, "heal")
    assert healed["exit_status"] == 0, healed
    ended = max(
        e["ts"]
        for e in reader.events(run_id)
        if e["kind"] == "action" and "heal on db3: done" in e["message"]
    )
    after = [r for r in reader.op_seconds(run_id, "heal") if r["ts"] > ended + 10]
    assert any(r["ops"] > 0 and r["errors"] == 0 for r in after), after  # served again
    from loadtower.sandbox import netns

    assert netns.data_link_up("db3")
