"""A workload file's open-model run phase on the Rust core (its binder in Rust) against
the sandbox's Cassandra, through `loadtower agent run` (the load runs on the core too:
tests/agents/test_rust_file_load_integration.py compares it with the Python path's);
its reads with expect = "rows" find what the load wrote (none is a NoRows error),
batches, `:[...]` lists and steps included."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.agents.agent_cli import op_totals, run_agent

pytestmark = pytest.mark.integration
core = pytest.importorskip("loadtower_core", reason="the Rust core is not built (no cargo)")

RATE, SECONDS, RECORDS = 200, 4, 1000
KEYSPACE = "lt_rust_file"

WORKLOAD = """
name = "core-kv"
load = "put"

[tables.kv]
partition_key = ["id"]

[tables.kv.columns]
id = "text"
v = "text"
n = "int"
seen = "timestamp"

[ops.put]
weight = 1
key = { gen = "sequence" }
cassandra = "INSERT INTO ${kv} (id, v, n, seen) VALUES (:id, :v, :n, :seen)"
bind.id = { gen = "key", prefix = "k", hash = true }
bind.v = { gen = "text", length = { min = 10, max = 100 } }
bind.n = { gen = "int", min = 0, max = 9 }
bind.seen = { gen = "timestamp" }

[ops.put_many]
weight = 1
batch = 5
key = { gen = "sequence" }
cassandra = "INSERT INTO ${kv} (id, v, n, seen) VALUES (:id, :v, :n, :seen)"
bind.id = { gen = "key", prefix = "k", hash = true }
bind.v = { gen = "text", length = 20 }
bind.n = { gen = "choice", values = [1, 2, 3] }
bind.seen = { gen = "timestamp", from = "2025-01-01T00:00:00Z", to = "2025-02-01T00:00:00Z" }

[ops.get]
weight = 4
expect = "rows"
key = { gen = "zipfian" }
cassandra = "SELECT v, n FROM ${kv} WHERE id = :id"
bind.id = { gen = "key", prefix = "k", hash = true }

[ops.get_many]
weight = 1
batch = 3
expect = "rows"
key = { gen = "uniform" }
cassandra = "SELECT v FROM ${kv} WHERE id IN :[id]"
bind.id = { gen = "key", prefix = "k", hash = true }

[ops.get_new]  # may miss: `written` draws ids as bound, a put may still be in flight
weight = 1
expect = "any"
cassandra = "SELECT v FROM ${kv} WHERE id = :id"
bind.id = { gen = "written", from = "put.id", window = 100 }

[ops.touch]
weight = 1
steps = ["get", "put"]
"""

SCENARIO = f"""
name = "core-file"

[target]
keyspace = "{KEYSPACE}"

[dataset]
records = {RECORDS}

[workloads.kv]
file = "kv.toml"

[[phases]]
type = "load"

[[phases]]
type = "run"
duration = "{SECONDS}s"
rate = {RATE}
"""


def test_a_workload_file_runs_on_the_rust_core(sandbox: dict, tmp_path: Path) -> None:
    (tmp_path / "kv.toml").write_text(WORKLOAD)
    scenario = tmp_path / "scenario.toml"
    scenario.write_text(SCENARIO)
    lines, summary, status = run_agent(
        sandbox, "--workload", str(scenario), "--records", str(RECORDS), "--load", "--rate", str(RATE),
        "--duration", str(SECONDS))
    assert status == 0 and summary["errors"] == 0, summary
    assert sum(t["ops"] for t in op_totals(lines, "load").values()) == RECORDS
    run = op_totals(lines, "run")
    assert set(run) == {"put", "put_many", "get", "get_many", "get_new", "touch"}, run
    assert all(t["errors"] == 0 for t in run.values()), run  # every read found its rows
    total = sum(t["ops"] for t in run.values())
    assert 0 < total <= 1.1 * RATE * SECONDS, total
    drains = [x for x in lines if x.get("kind") == "drain" and x["data"]["phase"] == "run"]
    counts = drains[-1]["data"]["core"]  # the core ran the phase and counted every op once
    assert counts["intended"] == counts["counted"] + counts["abandoned"] == total, counts
    paths = [x for x in lines if x.get("kind") == "cql_path" and x.get("phase") == "run"]
    assert paths and paths[-1]["data"]["driver"] == "scylla-rust-driver", paths
    assert "Rust core" in paths[-1]["message"]


def test_a_data_set_binding_names_why_the_python_path_runs(sandbox: dict, tmp_path: Path
                                                           ) -> None:
    """An op that binds a data set column: the run goes on the Python path, and the
    cql_path event names the generator."""
    (tmp_path / "people.csv").write_text("name\nada\n")
    workload = WORKLOAD.replace('load = "put"', 'load = "put"\n\n[datasets.people]\n'
                                'file = "people.csv"\ncolumns = { name = "text" }')
    workload = workload.replace('bind.v = { gen = "text", length = 20 }',
                                'bind.v = { gen = "dataset", column = "name" }')
    (tmp_path / "kv.toml").write_text(workload)
    scenario = tmp_path / "scenario.toml"
    scenario.write_text(SCENARIO)
    lines, _summary, status = run_agent(
        sandbox, "--workload", str(scenario), "--records", str(RECORDS), "--rate", "20",
        "--duration", "1")
    said = [x["message"] for x in lines if x.get("kind") == "cql_path"]
    assert any('binds v to gen = "dataset"' in m for m in said), (status, said)
