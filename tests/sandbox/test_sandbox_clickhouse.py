"""The sandbox's ClickHouse host (chdb behind the sandbox's HTTP endpoint), through the
actions its generated inventory declares: start, status, kill, restart, stop, and `down`
leaving no process. It runs in a sandbox directory of its own holding only that host
(no Cassandra is started); the SSH path of these actions is covered by the experiment-1
test on the shared sandbox."""

from __future__ import annotations

import shlex
import subprocess
import urllib.request
from pathlib import Path

import pytest

from loadtower.sandbox import Sandbox, inventory_file
from loadtower.sandbox import processes as procs
from loadtower.sandbox import state as st
from loadtower.sandbox.state import NodeState, SandboxState
from loadtower.scenarios.loader import load_inventory
from tests.conftest import live_pids

pytestmark = [pytest.mark.integration, pytest.mark.timeout(240)]
pytest.importorskip("chdb")


def _run(command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(shlex.split(command), capture_output=True, text=True, timeout=120)


def _ping(port: int) -> urllib.request.http.client.HTTPResponse | None:  # type: ignore[name-defined]
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/ping", timeout=5) as reply:
            reply.read()
            return reply
    except OSError:
        return None


def test_clickhouse_host_actions_login_and_down(tmp_path: Path) -> None:
    import clickhouse_connect
    from clickhouse_connect.driver.exceptions import DatabaseError

    port = procs.free_port(["127.0.0.1"])
    state = SandboxState(
        nodes={1: NodeState(1, "127.0.0.1", 7199)},
        ports={"native": 9042, "prometheus": 9090, "node_exporter": 9100, "ssh": 2222},
        ssh={"user": "me", "key": str(tmp_path / "id"), "known_hosts": str(tmp_path / "kh")},
    )
    state.ports["clickhouse"] = port
    st.save(tmp_path, state)
    inventory, _ = load_inventory(inventory_file.write(tmp_path, state))
    actions = inventory.hosts["ch1"].actions
    box = Sandbox(tmp_path)
    info: dict = {"dir": str(tmp_path)}
    try:
        started = _run(actions["start"])
        assert started.returncode == 0, started.stderr
        assert "up (pid" in started.stdout and "timings mean nothing" in started.stdout
        info = box.info()
        ch = info["clickhouse"]
        assert ch["up"] and ch["port"] == port and ch["host"] == "ch1"
        assert "MEAN NOTHING" in ch["warning"]
        reply = _ping(port)
        assert reply is not None
        assert reply.headers["X-ClickHouse-Server-Display-Name"] == "loadtower-sandbox-chdb"

        # login/password: the sandbox's own, from the file the inventory names
        password = Path(inventory.credentials("clickhouse").password_file or "").read_text()
        client = clickhouse_connect.get_client(
            host="127.0.0.1", port=port, username="loadtower", password=password.strip()
        )
        client.command("CREATE TABLE kept (n UInt8) ENGINE = MergeTree ORDER BY n")
        client.command("INSERT INTO kept VALUES (7)")
        with pytest.raises(DatabaseError, match="516"):
            clickhouse_connect.get_client(
                host="127.0.0.1", port=port, username="loadtower", password="wrong"
            )

        assert _run(actions["status"]).returncode == 0
        pid = ch["pid"]
        assert _run(actions["kill"]).returncode == 0
        assert _ping(port) is None and procs.proc_start_time(pid) is None  # gone (or a zombie)
        stopped = _run(actions["status"])
        assert (stopped.returncode, stopped.stdout.split(": ")[-1]) == (3, "stopped\n")
        assert box.info()["up"] is False  # a configured host that is down

        restarted = _run(actions["restart"])
        assert restarted.returncode == 0, restarted.stderr
        client = clickhouse_connect.get_client(
            host="127.0.0.1", port=port, username="loadtower", password=password.strip()
        )
        assert client.command("SELECT n FROM kept") == 7  # the data outlives a restart

        assert _run(actions["stop"]).returncode == 0
        assert _ping(port) is None
        assert _run(actions["stop"]).returncode == 0  # idle-safe
        assert _run(actions["start"]).returncode == 0
        info = box.info()
    finally:
        box.down()
    assert live_pids(info) == []
    assert _ping(port) is None
