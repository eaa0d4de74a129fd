"""Sandbox pieces that need no services: processes, ports, the generated inventory."""

from __future__ import annotations

import signal
import sys
from pathlib import Path

from loadtower.sandbox import processes as procs
from loadtower.sandbox.inventory_file import write
from loadtower.sandbox.state import NodeState, SandboxState
from loadtower.scenarios.loader import load_inventory


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


def test_generated_inventory_is_valid(tmp_path: Path) -> None:
    state = SandboxState(
        nodes={1: NodeState(1, "127.0.0.1", 7199), 2: NodeState(2, "127.0.0.2", 7200, True)},
        ports={
            "native": 9042,
            "storage": 7000,
            "prometheus": 9090,
            "node_exporter": 9100,
            "ssh": 2222,
        },
        ssh={"user": "me", "key": str(tmp_path / "id"), "known_hosts": str(tmp_path / "kh")},
    )
    inventory, _ = load_inventory(write(tmp_path, state))
    assert set(inventory.with_role("db")) == {"db1"}
    assert set(inventory.with_role("db", include_standby=True)) == {"db1", "db2"}
    db2 = inventory.hosts["db2"]
    assert db2.standby and db2.address == "127.0.0.2"
    assert "sandbox node start" in db2.actions["start"] and db2.actions["start"].endswith(" 2")
    assert inventory.ssh.port == 2222 and inventory.metrics.prometheus_url.endswith(":9090")
