"""`loadtower run` on the sandbox through real SSH: quickstart and ramp."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from loadtower.scenarios.loader import load_inventory
from loadtower.store import StoreReader
from tests.orchestrator.run_helpers import only_run, phase_bounds, run_scenario

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]


def test_quickstart_stores_every_second_of_ops_nodes_and_agents(
    sandbox: dict, tmp_path: Path
) -> None:
    store = tmp_path / "runs.duckdb"
    inventory = Path(sandbox["dir"]) / "inventory.toml"
    done = run_scenario("quickstart", inventory, store, "phases[1].duration=12s")
    assert done.returncode == 0, done.stderr
    run = only_run(store)
    assert f"run_id: {run['id']}" in done.stdout
    assert "ycsb-a" in done.stdout and "update" in done.stdout  # the result table
    assert run["status"] == "completed"

    reader = StoreReader(store)
    first, last = phase_bounds(reader, run["id"], "ycsb-a")
    assert last - first >= 8
    ops = {(r["ts"], r["op"]) for r in reader.op_seconds(run["id"], "ycsb-a")}
    for ts in range(first, last + 1):
        assert (ts, "read") in ops and (ts, "update") in ops, f"second {ts} missing"
    nodes = {(r["ts"], r["host"]) for r in reader.node_seconds(run["id"])}
    # the Cassandra hosts up at the start (the sandbox may also run a ClickHouse host, ch1)
    db_hosts = [
        name
        for name, host in load_inventory(inventory)[0].with_role("db").items()
        if host.engine == "cassandra"
    ]
    assert db_hosts
    for host in db_hosts:
        for ts in range(first, last + 1):
            assert (ts, host) in nodes, f"node sample of {host} at {ts} missing"
    assert {host for _ts, host in nodes} == set(db_hosts)  # not ch1: quickstart is CQL only
    agents = reader.agent_samples(run["id"])
    assert {a["host"] for a in agents} == {"agent1"}
    assert sum(1 for a in agents if first <= a["ts"] <= last) >= last - first

    events = reader.events(run["id"])
    _assert_the_load_came_over_ssh(reader, run["id"], events)
    kinds = [e["kind"] for e in events]
    assert kinds.count("phase_start") == 2 and kinds.count("phase_end") == 2

    summary = {(r["phase"], r["op"]): r for r in reader.phase_summary(run["id"])}
    assert summary[("1-load", "insert")]["errors"] == 0
    read = summary[("ycsb-a", "read")]
    update = summary[("ycsb-a", "update")]
    assert 350 <= read["ops_per_s"] + update["ops_per_s"] <= 650  # 500 ops/s asked
    assert read["errors"] == 0 and update["errors"] == 0
    assert 0 < read["p50_ms"] <= read["p99_ms"] <= read["max_ms"]
    _assert_coordinators(reader, run["id"], events, summary)
    facts = reader.run(run["id"])["host_facts"]
    facts = json.loads(facts) if isinstance(facts, str) else facts
    assert facts["db1"]["cpus"] >= 1
    _assert_versions(reader.run(run["id"])["versions"], db_hosts, events)


def _assert_coordinators(
    reader: StoreReader, run_id: str, events: list[dict], summary: dict
) -> None:
    """Each phase's requests per coordinating node (Cassandra's own counts, read at the
    phase's start and end): every op the agents counted, all on db1, the only node up;
    the standby db2, not running, is not named as silent."""
    found = {e["phase"]: e for e in events if e["kind"] == "coordinators"}
    data = {p: json.loads(e["data"]) if isinstance(e["data"], str) else e["data"]
            for p, e in found.items()}
    inserted = summary[("1-load", "insert")]["ops"]
    ran = summary[("ycsb-a", "read")]["ops"] + summary[("ycsb-a", "update")]["ops"]
    assert data == {"1-load": {"db1": inserted}, "ycsb-a": {"db1": ran}}
    assert "no answer" not in found["ycsb-a"]["message"]
    results = {p["name"]: p["result"] for p in reader.phases(run_id)}
    result = results["ycsb-a"]
    result = json.loads(result) if isinstance(result, str) else result
    assert result["coordinators"] == {"db1": ran}


def _assert_the_load_came_over_ssh(reader: StoreReader, run_id: str, events: list[dict]) -> None:
    """The workers were told the remote end of an SSH reverse forward (not the master's own
    port), said so from the agent host's SSH session, and joined under their host's name."""
    [forward] = [e for e in events if "SSH reverse forward" in e["message"]]
    remote, master = forward["data"]["remote_port"], forward["data"]["master_port"]
    assert forward["host"] == "agent1" and remote != master
    _cols, logs = reader.sql(f"SELECT host, stream, text FROM logs WHERE run_id = '{run_id}'")
    said = [text for host, stream, text in logs
            if host == "agent1" and stream == "stderr" and text.startswith("loadtower workers on")]
    assert len(said) == 1, logs
    assert f"Locust master at 127.0.0.1:{remote}, an SSH reverse forward to the orchestrator's " \
        f"127.0.0.1:{master}" in said[0]
    assert f"(machine {socket.gethostname()}, shell pid " in said[0]  # run by that host's shell
    joined = [e for e in events if (e["data"] or {}).get("kind") == "worker_joined"]
    assert [(e["host"], e["data"]["agent"]) for e in joined] == [("agent1", "agent1/0")]
    assert joined[0]["message"].startswith("load worker agent1/0 joined from agent1")
    assert {a["agent"] for a in reader.agent_samples(run_id)} == {"agent1/0"}


def _assert_versions(versions: dict | str, db_hosts: list[str], events: list[dict]) -> None:
    versions = json.loads(versions) if isinstance(versions, str) else versions
    assert versions["loadtower"] and versions["cassandra-driver"]  # the orchestrator's own
    for host in db_hosts:
        found = versions["databases"][host]
        assert found["engine"] == "cassandra" and found["version"].startswith("5.0."), found
    agent = versions["agents"]["agent1"]
    assert agent["loadtower"] == versions["loadtower"]
    assert agent["cassandra-driver"] == versions["cassandra-driver"]
    assert agent["python"].count(".") == 2
    [said] = [e["message"] for e in events if e["kind"] == "versions"]
    assert said.startswith(f"versions: {db_hosts[0]} cassandra 5.0.")


def test_ramp_stops_at_the_first_failing_step(sandbox: dict, tmp_path: Path) -> None:
    scenario = tmp_path / "ramp.toml"
    scenario.write_text(
        """
name = "ramp-test"
[target]
keyspace = "lt_ramp"
[dataset]
records = 2000
[workloads.reads]
preset = "ycsb-c"
[[phases]]
type = "load"
[[phases]]
type = "ramp"
name = "ramp"
rates = [50, 300000, 600000]
step_duration = "8s"
target_p99_ms = 1000
"""
    )
    store = tmp_path / "runs.duckdb"
    done = run_scenario(scenario, Path(sandbox["dir"]) / "inventory.toml", store)
    assert done.returncode == 0, done.stderr
    run = only_run(store)
    reader = StoreReader(store)
    ramp = next(p for p in reader.phases(run["id"]) if p["name"] == "ramp")
    result = json.loads(ramp["result"]) if isinstance(ramp["result"], str) else ramp["result"]
    # 50 ops/s passes easily; 300,000 ops/s is far past what the sandbox can serve (about
    # 30,000 reads/s from one agent process), so
    # response times (measured from each op's intended start) exceed 1 s
    assert result["highest_passing_level"] == 50 and result["best_level"] == 50
    assert result["first_failing_level"] == 300000
    assert result["stop_reason"].startswith("p99 ") and "> 1000 ms" in result["stop_reason"]
    assert [s["level"] for s in result["steps"]] == [50, 300000]  # 600,000 never ran
    assert 40 <= result["highest_passing_ops_per_s"] <= 60
    assert "highest throughput with p99 <= 1000 ms" in done.stdout
    events = [e["message"] for e in reader.events(run["id"]) if e["kind"] == "ramp_step"]
    assert len(events) == 2 and "FAILED" in events[1]
