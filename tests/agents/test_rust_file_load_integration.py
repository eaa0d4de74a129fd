"""A workload file's load phase and closed-model run phase on the Rust core (its binder
in Rust, engines/cassandra/native/src/closed.rs) against the sandbox's Cassandra, through
`loadtower agent run`: the core's load writes exactly the rows the Python path's load
writes (count, and every row's key-derived columns; the random text in its length
range), in UNLOGGED BATCHes of the op's 10 rows; then a closed-model phase on the core
whose reads with expect = "rows" over the loaded keys find every row (0 NoRows)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.agents.agent_cli import op_totals, run_agent

pytestmark = pytest.mark.integration
core = pytest.importorskip("loadtower_core", reason="the Rust core is not built (no cargo)")

RECORDS, BATCH, USERS, SECONDS = 3000, 10, 4, 3
CORE_KS, PY_KS = "lt_core_load", "lt_py_load"

WORKLOAD = f"""
name = "core-load"
load = "put"

[tables.kv]
partition_key = ["id"]

[tables.kv.columns]
id = "text"
n = "bigint"
v = "text"
at = "timestamp"

[ops.put]
weight = 1
batch = {BATCH}
key = {{ gen = "sequence" }}
cassandra = "INSERT INTO ${{kv}} (id, n, v, at) VALUES (:id, :n, :v, :at)"
bind.id = {{ gen = "key", prefix = "k", hash = true }}
bind.n = {{ gen = "key" }}
bind.v = {{ gen = "text", length = {{ min = 5, max = 50 }} }}
bind.at = {{ gen = "key", start = "2025-01-01T00:00:00Z", step = 60 }}

[ops.get]
weight = 4
expect = "rows"
key = {{ gen = "uniform" }}
cassandra = "SELECT n, v FROM ${{kv}} WHERE id = :id"
bind.id = {{ gen = "key", prefix = "k", hash = true }}

[ops.touch]
weight = 1
steps = ["get", "put"]
"""


def scenario(keyspace: str, native_io: str) -> str:
    return f"""
name = "core-load"

[target]
keyspace = "{keyspace}"
native_io = "{native_io}"

[dataset]
records = {RECORDS}

[workloads.kv]
file = "kv.toml"

[[phases]]
type = "load"
"""


def _cql(sandbox: dict) -> tuple[Any, Any]:
    from cassandra.auth import PlainTextAuthProvider
    from cassandra.cluster import Cluster

    cass = sandbox["cassandra"]
    cluster = Cluster(cass["contact_points"], port=cass["port"], connect_timeout=10,
                      auth_provider=PlainTextAuthProvider(cass["username"], cass["password"]))
    return cluster, cluster.connect()


@pytest.fixture(scope="module")
def cql(sandbox: dict) -> Iterator[Any]:
    """A session on the sandbox; both keyspaces dropped before and after."""
    cluster, session = _cql(sandbox)

    def drop() -> None:
        for ks in (CORE_KS, PY_KS):
            session.execute(f"DROP KEYSPACE IF EXISTS {ks}", timeout=120)

    try:
        drop()
        yield session
    finally:
        try:
            drop()
        finally:
            cluster.shutdown()


def _agent(sandbox: dict, tmp_path: Path, keyspace: str, native_io: str,
           *extra: str) -> tuple[list[dict], dict]:
    work = tmp_path / keyspace
    work.mkdir()
    (work / "kv.toml").write_text(WORKLOAD)
    (work / "scenario.toml").write_text(scenario(keyspace, native_io))
    lines, summary, status = run_agent(
        sandbox, "--workload", str(work / "scenario.toml"), "--records", str(RECORDS),
        "--load", *extra, timeout=240)
    assert status == 0, summary
    return lines, summary


def _loaded(session: Any, keyspace: str) -> dict[str, tuple]:
    """The load's rows (key numbers below RECORDS): id -> (n, at, len(v))."""
    rows = session.execute(f"SELECT id, n, at, v FROM {keyspace}.kv", timeout=60)
    return {r.id: (r.n, r.at, len(r.v)) for r in rows if r.n < RECORDS}


def test_the_core_loads_the_python_paths_rows_and_runs_a_closed_phase(
        sandbox: dict, cql: Any, tmp_path: Path) -> None:
    lines, summary = _agent(sandbox, tmp_path, CORE_KS, "rust", "--users", str(USERS),
                            "--duration", str(SECONDS))
    paths = {x.get("phase"): x for x in lines if x.get("kind") == "cql_path"}
    assert paths["load"]["data"]["mode"] == "load", paths
    assert paths["load"]["message"].startswith("the load's inserts on the Rust core"), paths
    assert paths["run"]["data"]["mode"] == "closed", paths
    load = op_totals(lines, "load")
    assert load == {"put": {"ops": RECORDS // BATCH, "errors": 0, "late": 0}}, load
    run = op_totals(lines, "run")
    assert set(run) == {"put", "get", "touch"}, run
    assert all(t["errors"] == 0 and t["late"] == 0 for t in run.values()), run  # 0 NoRows
    total = sum(t["ops"] for t in run.values())
    assert total > 0 and summary["errors"] == 0, (total, summary)
    drains = [x for x in lines if x.get("kind") == "drain" and x["data"]["phase"] == "run"]
    counts = drains[-1]["data"]["core"]  # the core ran the phase and counted every op once
    assert counts["intended"] == counts["counted"] + counts["abandoned"] == total, counts

    py_lines, _ = _agent(sandbox, tmp_path, PY_KS, "python", "--duration", "0")
    said = [x["message"] for x in py_lines if x.get("kind") == "cql_path"]
    assert any(m.startswith("native_io python; the load's inserts run from Python")
               for m in said), said
    assert sum(t["ops"] for t in op_totals(py_lines, "load").values()) == RECORDS // BATCH

    on_core, on_python = _loaded(cql, CORE_KS), _loaded(cql, PY_KS)
    assert len(on_core) == len(on_python) == RECORDS
    # the key-derived columns of every row are the reference binder's
    assert {k: v[:2] for k, v in on_core.items()} == {k: v[:2] for k, v in on_python.items()}
    assert {v[2] for v in on_core.values()} <= set(range(5, 51))


def test_rows_whose_load_op_failed_are_counted(sandbox: dict, cql: Any, tmp_path: Path) -> None:
    """A load op that must find rows (an INSERT finds none: every op is a NoRows error):
    the core counts the failed rows and the agent warns with their number."""
    work = tmp_path / "failing"
    work.mkdir()
    (work / "kv.toml").write_text(WORKLOAD.replace('[ops.put]\n', '[ops.put]\nexpect = "rows"\n'))
    (work / "scenario.toml").write_text(scenario(CORE_KS, "rust").replace(
        f"records = {RECORDS}", "records = 200"))
    lines, summary, status = run_agent(sandbox, "--workload", str(work / "scenario.toml"),
                                       "--records", "200", "--load", "--duration", "0",
                                       timeout=240)
    assert status == 1 and summary["errors"] == 200 // BATCH, summary
    paths = [x for x in lines if x.get("kind") == "cql_path" and x.get("phase") == "load"]
    assert paths and paths[-1]["data"]["mode"] == "load", paths
    warned = [x["message"] for x in lines if x.get("kind") == "warning"]
    assert "phase load: 200 of 200 rows of the load failed" in warned, warned
