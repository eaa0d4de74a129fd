"""The load agent against the sandbox's real Cassandra."""

from __future__ import annotations

import importlib.util
import threading
import time

import pytest

from loadtower.protocol.hdr_encoding import new_hist
from loadtower.store.hdr import decode
from tests.agents.agent_cli import intervals, op_totals, run_agent

pytestmark = pytest.mark.integration


def cql(sandbox: dict, query: str):  # noqa: ANN201
    from cassandra.auth import PlainTextAuthProvider
    from cassandra.cluster import Cluster

    cass = sandbox["cassandra"]
    cluster = Cluster(
        cass["contact_points"],
        port=cass["port"],
        connect_timeout=10,
        auth_provider=PlainTextAuthProvider(cass["username"], cass["password"]),
    )
    try:
        return cluster.connect().execute(query, timeout=60).one()
    finally:
        cluster.shutdown()


@pytest.mark.parametrize("driver", ["acsylla", "cassandra-driver"])
def test_load_then_ycsb_a_at_fixed_rate(sandbox: dict, driver: str) -> None:
    """The reference path (``native_io = "python"``): the open model's lanes in Python
    over each session driver."""
    ks = f"lt_agent_{driver.replace('-', '_')}"
    lines, summary, status = run_agent(
        sandbox,
        "--driver",
        driver,
        "--native-io",
        "python",
        "--keyspace",
        ks,
        "--workload",
        "ycsb-a",
        "--records",
        "10000",
        "--load",
        "--rate",
        "300",
        "--duration",
        "10",
    )
    assert status == 0 and summary["errors"] == 0
    load = op_totals(lines, "load")
    assert load["insert"]["ops"] == 10_000 and load["insert"]["errors"] == 0
    run = op_totals(lines, "run")
    assert set(run) == {"read", "update"}
    assert all(t["errors"] == 0 for t in run.values())
    total = sum(t["ops"] for t in run.values())
    assert 0.8 * 3000 <= total <= 1.1 * 3000, total  # 300 ops/s for 10 s
    assert summary["ops"] == total
    assert cql(sandbox, f"SELECT count(*) FROM {ks}.usertable")[0] == 10_000
    paths = [x["message"] for x in lines if x.get("kind") == "cql_path"]
    assert paths == [f"native_io python; the load's inserts run from Python on {driver}",
                     f"native_io python; open-model sends run from Python on {driver}"], paths


def test_recipes_at_a_fixed_rate_run_on_the_core_as_a_workload_file(sandbox: dict) -> None:
    """Batches, a composite partition key (float, uuid) and deletes in the open model: the
    built-in recipes arrive as their shipped workload file, which the Rust core binds in
    the load and the run (a cql_path event for each says so), or, where the core is not
    installed, the Python lanes (and the events say why)."""
    lines, summary, status = run_agent(
        sandbox, "--driver", "acsylla", "--keyspace", "lt_agent_recipes_open",
        "--workload", "recipes", "--records", "2000", "--load", "--rate", "200",
        "--duration", "5",
    )
    assert status == 0 and summary["errors"] == 0
    run = op_totals(lines, "run")
    assert set(run) == {"read", "insert", "insert_batch", "delete", "delete_batch"}
    assert all(t["errors"] == 0 for t in run.values())
    total = sum(t["ops"] for t in run.values())
    assert 0.8 * 1000 <= total <= 1.1 * 1000, total  # 200 ops/s for 5 s
    paths = [x["message"] for x in lines if x.get("kind") == "cql_path"]
    assert len(paths) == 2, paths  # the load's, then the run's
    if importlib.util.find_spec("loadtower_core"):
        assert paths[0].startswith("the load's inserts on the Rust core: "), paths
        assert paths[1].startswith("open-model sends on the Rust core: "), paths
    else:
        assert all(p.startswith("native_io rust: loadtower_core is not installed")
                   for p in paths), paths
        assert paths[0].endswith("; the load's inserts run from Python on acsylla"), paths
        assert paths[1].endswith("; open-model sends run from Python on acsylla"), paths


def test_recipes_mix_runs_all_five_ops(sandbox: dict) -> None:
    lines, summary, status = run_agent(
        sandbox,
        "--keyspace",
        "lt_agent_recipes",
        "--workload",
        "recipes",
        "--records",
        "3000",
        "--load",
        "--users",
        "8",
        "--duration",
        "5",
    )
    assert status == 0 and summary["errors"] == 0
    run = op_totals(lines, "run")
    assert set(run) == {"read", "insert", "insert_batch", "delete", "delete_batch"}
    ops = sum(t["ops"] for t in run.values())
    assert run["read"]["ops"] / ops > 0.5  # 60% of the mix


def test_ttl_rows_expire(sandbox: dict) -> None:
    _, summary, status = run_agent(
        sandbox,
        "--keyspace",
        "lt_agent_ttl",
        "--workload",
        "ttl",
        "--ttl",
        "10",
        "--records",
        "500",
        "--load",
        "--duration",
        "0",
    )
    assert status == 0 and summary["ops"] == 500
    loaded = time.monotonic()
    assert cql(sandbox, "SELECT count(*) FROM lt_agent_ttl.ttl_rows")[0] > 0
    remaining = -1
    while time.monotonic() - loaded < 30 and remaining != 0:
        time.sleep(1)
        remaining = cql(sandbox, "SELECT count(*) FROM lt_agent_ttl.ttl_rows")[0]
    assert remaining == 0, "rows with a 10 s TTL still there after 30 s"


def test_coordinated_omission_stall_is_visible(sandbox: dict) -> None:
    """SIGSTOP the Cassandra node for 1 s under a fixed rate: response time shows it."""
    from loadtower.sandbox import Sandbox

    box = Sandbox(sandbox["dir"])
    marks: dict[str, float] = {}

    def stall() -> None:
        time.sleep(3)
        box.node("pause", 1)
        marks["paused"] = time.time()
        time.sleep(1.0)
        box.node("resume", 1)
        marks["resumed"] = time.time()

    def on_line(line: dict) -> None:
        if line.get("type") == "interval" and line["phase"] == "run" and not marks:
            marks["first"] = time.time()
            threading.Thread(target=stall, daemon=True).start()

    lines, summary, status = run_agent(
        sandbox,
        "--keyspace",
        "lt_agent_co",
        "--workload",
        "ycsb-c",
        "--records",
        "2000",
        "--load",
        "--rate",
        "400",
        "--duration",
        "10",
        on_line=on_line,
    )
    try:
        assert "resumed" in marks, "the stall never happened"
    finally:
        if "paused" in marks and "resumed" not in marks:
            box.node("resume", 1)
    run = intervals(lines, "run")
    response, service_after = new_hist(), new_hist()
    late = 0
    for line in run:
        for stats in line["ops"].values():
            response.add(decode(stats["response_hist"]))
            late += stats["late"]
            if line["ts"] >= marks["resumed"] + 2:  # completed well after the stall: sent after it
                service_after.add(decode(stats["service_hist"]))
    assert response.get_value_at_percentile(99) >= 800_000  # µs: the 1 s stall shows
    assert service_after.get_total_count() > 0
    assert service_after.get_value_at_percentile(99) < 200_000
    assert late > 0
    assert summary["errors"] == 0
    if importlib.util.find_spec("loadtower_core") is not None:  # ran on the Rust core
        paths = [x["data"] for x in lines if x.get("kind") == "cql_path" and x.get("data")]
        assert paths and paths[-1]["driver"] == "scylla-rust-driver", paths
