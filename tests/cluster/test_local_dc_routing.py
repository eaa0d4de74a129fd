"""Local-DC routing and per-host node metrics on the cluster sandbox.

With the target's `local_dc = "dc1"` every op is coordinated by dc1 nodes: the run's
per-phase coordinator record (requests each node coordinated, from its
system_views, stored as a `coordinators` event) names none for db3 (dc2). The run phase
ran on the Rust core on both agent hosts, over TLS with local DC dc1 (its `cql_path`
events: the core's session has no connection to dc2 at all). The node
samples come from each host's own cgroup, so they differ between hosts although all
share one kernel: db1, which coordinates the load, is busier than db3.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loadtower.store import StoreReader
from tests.cluster.conftest import FirstRun
from tests.cluster.core_path import assert_on_rust_core
from tests.orchestrator.run_helpers import only_run, phase_bounds, run_scenario

pytestmark = [pytest.mark.integration, pytest.mark.timeout(900)]

SCENARIO = """
name = "dc1-local"
[target]
keyspace = "lt_dc1_local"
local_dc = "dc1"
replication = {dc1 = 1, dc2 = 1}
consistency = "LOCAL_ONE"
[dataset]
records = 2000
[workloads.mixed]
preset = "ycsb-b"
[[phases]]
type = "load"
concurrency = 16
[[phases]]
type = "run"
name = "steady"
duration = "20s"
rate = 400
"""


@pytest.fixture(scope="module")
def dc1_run(cluster: dict, first_run: FirstRun, tmp_path_factory: pytest.TempPathFactory) -> dict:
    tmp = tmp_path_factory.mktemp("dc1-local")
    (tmp / "dc1.toml").write_text(SCENARIO)
    store = tmp / "runs.duckdb"
    done = run_scenario(tmp / "dc1.toml", Path(cluster["dir"]) / "inventory.toml", store)
    assert done.returncode == 0, done.stderr[-3000:]
    return {"store": store, "run": only_run(store)}


def test_ops_coordinated_by_dc1_nodes_only(dc1_run: dict) -> None:
    reader = StoreReader(dc1_run["store"])
    records = [
        e
        for e in reader.events(dc1_run["run"]["id"])
        if e["kind"] == "coordinators" and e["phase"] == "steady"
    ]
    assert records, "no coordinator record for the phase"
    data = records[-1]["data"]
    counts = json.loads(data) if isinstance(data, str) else data
    assert counts.get("db1", 0) > 0, counts
    assert counts.get("db3", 0) == 0, counts  # dc2's node coordinated nothing
    assert_on_rust_core(reader, dc1_run["run"]["id"], tls=True, local_dc="dc1")


def test_node_cpu_differs_between_hosts(dc1_run: dict) -> None:
    reader = StoreReader(dc1_run["store"])
    run_id = dc1_run["run"]["id"]
    first, last = phase_bounds(reader, run_id, "steady")
    _cols, rows = reader.sql(
        f"SELECT host, avg(cpu_pct), avg(mem_used_bytes) FROM node_samples "
        f"WHERE run_id = '{run_id}' AND ts BETWEEN {first} AND {last} GROUP BY host"
    )
    cpu = {host: c for host, c, _m in rows}
    mem = {host: m for host, _c, m in rows}
    assert {"db1", "db3"} <= set(cpu), cpu
    assert cpu["db1"] > cpu["db3"] > 0, cpu  # the coordinator works more than dc2's node
    assert mem["db1"] != mem["db3"], mem  # each host's own cgroup, not the machine's
