"""Sandbox pieces that need no services: processes, ports, the generated inventory."""

from __future__ import annotations

import signal
import sys
from pathlib import Path

from loadtower.sandbox import processes as procs
from loadtower.sandbox.inventory_file import write
from loadtower.sandbox.state import NodeState, SandboxState
from loadtower.scenarios.loader import load_inventory
from tests.sandbox.engine_hosts import none_of_the_engines


def test_spawned_process_is_detached_and_stopped_even_when_paused(tmp_path: Path) -> None:
    record = procs.spawn([sys.executable, "-c", "import time; time.sleep(60)"], tmp_path / "p.log")
    try:
        assert procs.is_alive(record)
        assert procs.send(record, signal.SIGSTOP)
        procs.stop(record, timeout=10)
        assert not procs.is_alive(record)
    finally:
        procs.send(record, signal.SIGKILL)


def test_recycled_pid_is_not_ours(tmp_path: Path) -> None:
    record = procs.spawn([sys.executable, "-c", "import time; time.sleep(60)"], tmp_path / "p.log")
    try:
        other = procs.ProcessRecord(record.pid, record.start_time + 1, record.log, "x")
        assert not procs.is_alive(other)
        assert not procs.send(other, signal.SIGKILL)
        assert procs.is_alive(record)
    finally:
        procs.stop(record, timeout=10)


def test_free_port_avoids_taken_and_bound_ports() -> None:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        busy = sock.getsockname()[1]
        port = procs.free_port(["127.0.0.1"], preferred=busy)
        assert port != busy
        assert procs.free_port(["127.0.0.1"], preferred=port, taken={port}) != port


def _state(tmp_path: Path, **ports: int) -> SandboxState:
    return SandboxState(
        nodes={1: NodeState(1, "127.0.0.1", 7199), 2: NodeState(2, "127.0.0.2", 7200, True)},
        ports={
            "native": 9042,
            "storage": 7000,
            "prometheus": 9090,
            "node_exporter": 9100,
            "ssh": 2222,
            **ports,
        },
        ssh={"user": "me", "key": str(tmp_path / "id"), "known_hosts": str(tmp_path / "kh")},
    )


def test_generated_inventory_is_valid(tmp_path: Path) -> None:
    state = _state(tmp_path)
    inventory, _ = load_inventory(write(tmp_path, state))
    assert set(inventory.with_role("db")) == {"db1"}
    assert set(inventory.with_role("db", include_standby=True)) == {"db1", "db2"}
    db2 = inventory.hosts["db2"]
    assert db2.standby and db2.address == "127.0.0.2"
    assert "sandbox node start" in db2.actions["start"] and db2.actions["start"].endswith(" 2")
    assert inventory.ssh.port == 2222 and inventory.metrics.prometheus_url.endswith(":9090")
    assert "ch1" not in inventory.hosts  # no ClickHouse host in this sandbox


def test_up_refuses_to_resize_a_running_sandbox(tmp_path: Path) -> None:
    """`up --cassandra-nodes 2` on a sandbox running 1 node fails and leaves it running.

    The "services" and the node are real (sleeping) processes, recorded the way `up`
    records them, so the sandbox counts as up without starting Cassandra.
    """
    import pytest

    from loadtower.errors import LoadtowerError
    from loadtower.sandbox import Sandbox
    from loadtower.sandbox import sandbox as sandbox_module
    from loadtower.sandbox import state as st

    def sleeper(name: str) -> procs.ProcessRecord:
        argv = [sys.executable, "-c", "import time; time.sleep(120)"]
        return procs.spawn(argv, tmp_path / "logs" / f"{name}.log")

    records: list[procs.ProcessRecord] = []
    try:
        services = {name: sleeper(name) for name in sandbox_module.SERVICES}
        records += services.values()
        node1 = NodeState(1, "127.0.0.1", 7199, process=sleeper("node1"))
        records.append(node1.process)
        state = SandboxState(
            nodes={1: node1, 2: NodeState(2, "127.0.0.2", 7200, standby=True)},
            ports={"native": procs.free_port(), "storage": 7000, "prometheus": 9090,
                   "node_exporter": 9100, "ssh": 2222},
            services=services,
            auth_ready=True,
        )  # fmt: skip
        st.save(tmp_path, state)
        with pytest.raises(LoadtowerError) as info:
            Sandbox(tmp_path, nodes=2).up(timeout=5)
        assert str(info.value) == (
            f"the sandbox in {tmp_path.resolve()} is already up with 1 Cassandra node, not 2: "
            f"pass --cassandra-nodes 1, or run `loadtower sandbox down --dir "
            f"{tmp_path.resolve()}` first"
        )
        assert all(procs.is_alive(r) for r in records)
        assert Sandbox(tmp_path).info()["up"]
    finally:
        for record in records:
            procs.stop(record, timeout=10)


def test_generated_inventory_has_the_clickhouse_host(tmp_path: Path) -> None:
    inventory, _ = load_inventory(write(tmp_path, _state(tmp_path, clickhouse=18123)))
    assert set(inventory.with_role("db")) == {"db1", "ch1"}
    ch1 = inventory.hosts["ch1"]
    assert (ch1.engine, ch1.address, ch1.port, ch1.standby) == (
        "clickhouse",
        "127.0.0.1",
        18123,
        False,
    )
    assert inventory.db_port("ch1", "clickhouse") == 18123
    creds = inventory.credentials("clickhouse")
    assert creds.username == "loadtower"
    assert creds.password_file == str(tmp_path / "secrets" / "clickhouse.password")
    # start/stop/kill/restart/status; no compact: the phase runs OPTIMIZE TABLE ... FINAL
    assert set(ch1.actions) == {"start", "stop", "kill", "restart", "status"}
    for action, command in ch1.actions.items():
        assert f"sandbox clickhouse {action} --dir {tmp_path}" in command
    # the Cassandra hosts are as before
    assert (
        inventory.hosts["db1"].engine == "cassandra" and "ch1" not in inventory.hosts["db1"].actions
    )


def test_the_generated_inventory_says_clickhouse_timings_mean_nothing(tmp_path: Path) -> None:
    text = write(tmp_path, _state(tmp_path, clickhouse=8123)).read_text()
    assert "TIMINGS FROM IT MEAN NOTHING" in text


def test_clickhouse_actions_without_a_clickhouse_host_say_how_to_get_one(tmp_path: Path) -> None:
    import pytest

    from loadtower.errors import LoadtowerError
    from loadtower.sandbox import Sandbox
    from loadtower.sandbox import state as st

    st.save(tmp_path, _state(tmp_path))
    with pytest.raises(LoadtowerError, match="has no ClickHouse host .*--clickhouse"):
        Sandbox(tmp_path).engine_action("clickhouse", "start")
    info = Sandbox(tmp_path).info()
    assert info["clickhouse"]["enabled"] is False and info["clickhouse"]["up"] is False
    assert info["clickhouse"]["reason"] in ("not started (--no-clickhouse)",
                                            "chdb is not importable here (pip install chdb-core)")


def test_decommission_is_for_standby_nodes_only(tmp_path: Path) -> None:
    import pytest

    from loadtower.errors import LoadtowerError
    from loadtower.sandbox import Sandbox
    from loadtower.sandbox import state as st

    st.save(tmp_path, _state(tmp_path))
    with pytest.raises(LoadtowerError, match="node 1 is not a standby node"):
        Sandbox(tmp_path).node("decommission", 1)
    home = tmp_path / "cassandra" / "node2"
    home.mkdir(parents=True)
    assert Sandbox(tmp_path).node("decommission", 2) == "node 2: standby\n"  # never ran
    assert not home.exists()  # a fresh standby again


def test_no_clickhouse_on_a_running_sandbox_stops_it_and_drops_ch1(tmp_path: Path) -> None:
    """`up --no-clickhouse` on a running sandbox stops its ClickHouse host, leaves the rest
    running and writes the inventory without ch1. The services are real (sleeping)
    processes recorded the way `up` records them."""
    from loadtower.sandbox import Sandbox
    from loadtower.sandbox import sandbox as sandbox_module
    from loadtower.sandbox import state as st

    def sleeper(name: str) -> procs.ProcessRecord:
        argv = [sys.executable, "-c", "import time; time.sleep(120)"]
        return procs.spawn(argv, tmp_path / "logs" / f"{name}.log")

    records: list[procs.ProcessRecord] = []
    try:
        state = _state(tmp_path, clickhouse=procs.free_port())
        state.ports["native"] = procs.free_port()
        state.services = {name: sleeper(name) for name in sandbox_module.SERVICES}
        state.services["clickhouse"] = sleeper("clickhouse")
        state.nodes[1].process = sleeper("node1")
        state.auth_ready = True
        records += [r for r in state.services.values() if r] + [state.nodes[1].process]
        st.save(tmp_path, state)
        info = Sandbox(tmp_path, engines=none_of_the_engines()).up(timeout=5)
        assert info["clickhouse"]["enabled"] is False and info["clickhouse"]["up"] is False
        assert info["clickhouse"]["reason"] == "not started (--no-clickhouse)"
        assert not procs.is_alive(records[-2])  # the ClickHouse host
        assert all(procs.is_alive(r) for r in records if r is not records[-2])
        inventory, _ = load_inventory(tmp_path / "inventory.toml")
        assert "ch1" not in inventory.hosts and set(inventory.with_role("db")) == {"db1"}
        assert "clickhouse" not in st.load(tmp_path).ports
    finally:
        for record in records:
            procs.stop(record, timeout=10)


def test_the_sandbox_help_is_in_the_engines_words() -> None:
    """`sandbox --help` names no engine itself (issue 30): the ring's and the engine hosts'
    words, and `up --cassandra-nodes` is the ring's option (`RingEngine.nodes_flag`)."""
    import argparse

    from loadtower.sandbox import commands

    parser = argparse.ArgumentParser()
    commands.add_arguments(parser)
    text = parser.description or ""
    assert text.startswith("A local sandbox of REAL services on loopback: N Cassandra 5.0.6")
    assert "ClickHouse TIMINGS FROM THAT ENDPOINT MEAN NOTHING" in " ".join(text.split())
    assert "the ClickHouse host ch1, the MongoDB host mongo1" in " ".join(text.split())
    assert "--cassandra-nodes 2" in text and "sandbox clickhouse restart" in text
    args = parser.parse_args(["up", "--cassandra-nodes", "3", "--no-clickhouse"])
    assert (args.nodes, args.clickhouse) == (3, False)
