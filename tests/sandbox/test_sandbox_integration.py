"""The sandbox's services are real and reachable with the credentials it prints."""

from __future__ import annotations

import asyncio
import json
import pwd
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import live_pids, one_up_at_a_time
from tests.sandbox.engine_hosts import running_engine_hosts

pytestmark = pytest.mark.integration


def cql_session(info: dict, password: str | None = None,
                max_schema_agreement_wait: float = 10) -> tuple:
    from cassandra.auth import PlainTextAuthProvider
    from cassandra.cluster import Cluster

    cass = info["cassandra"]
    cluster = Cluster(
        cass["contact_points"],
        port=cass["port"],
        connect_timeout=10,
        auth_provider=PlainTextAuthProvider(cass["username"], password or cass["password"]),
        max_schema_agreement_wait=max_schema_agreement_wait,
    )
    return cluster, cluster.connect()


def test_cql_with_sandbox_credentials_gives_cassandra_5(sandbox: dict) -> None:
    cluster, session = cql_session(sandbox)
    try:
        row = session.execute("SELECT release_version FROM system.local", timeout=10).one()
    finally:
        cluster.shutdown()
    assert row.release_version.startswith("5.0.")


def test_wrong_password_is_refused(sandbox: dict) -> None:
    from cassandra.cluster import NoHostAvailable

    with pytest.raises(NoHostAvailable, match="(?i)authentication|credentials|password"):
        cql_session(sandbox, password="not-the-password")


def test_prometheus_has_node_exporter_series(sandbox: dict) -> None:
    from prometheus_api_client import PrometheusConnect

    prom = PrometheusConnect(url=sandbox["prometheus"]["url"], disable_ssl=True)
    instance = sandbox["node_exporter"]["instance"]
    query = f'node_cpu_seconds_total{{instance="{instance}",mode="idle"}}'
    deadline = time.monotonic() + 30
    result: list = []
    while time.monotonic() < deadline and not result:
        result = prom.custom_query(query, params={"timeout": "5s"})
        if not result:
            time.sleep(1)
    assert result, f"no {query} series in Prometheus"
    assert float(result[0]["value"][1]) > 0


def test_command_over_ssh_with_generated_key_and_known_hosts(sandbox: dict) -> None:
    import asyncssh

    ssh = sandbox["ssh"]

    async def go() -> asyncssh.SSHCompletedProcess:
        async with asyncssh.connect(
            ssh["host"],
            port=ssh["port"],
            username=ssh["user"],
            client_keys=[ssh["key"]],
            known_hosts=ssh["known_hosts"],
            connect_timeout=10,
        ) as conn:
            return await asyncio.wait_for(
                conn.run('echo hello-$((6*7)); id -un; echo "shlvl-$SHLVL"'), 20
            )

    result = asyncio.run(go())
    assert result.exit_status == 0
    words = result.stdout.split()
    assert words[:2] == ["hello-42", ssh["user"]]
    # sshd's SetEnv SHLVL=1: bash runs the command as a nested shell, so it does not read
    # the local user's ~/.bashrc (ssh_server.prepare); other shells need not count levels
    if pwd.getpwnam(ssh["user"]).pw_shell.endswith("/bash"):
        assert words[2] == "shlvl-2", words


def test_unknown_host_key_is_refused(sandbox: dict, tmp_path: Path) -> None:
    import asyncssh

    ssh = sandbox["ssh"]
    empty = tmp_path / "known_hosts"
    empty.write_text("")

    async def go() -> None:
        async with asyncssh.connect(
            ssh["host"],
            port=ssh["port"],
            username=ssh["user"],
            client_keys=[ssh["key"]],
            known_hosts=str(empty),
            connect_timeout=10,
        ):
            pass

    with pytest.raises(asyncssh.HostKeyNotVerifiable):
        asyncio.run(go())


def test_status_json_and_inventory(sandbox: dict) -> None:
    from loadtower.scenarios.catalog import resolve_scenario
    from loadtower.scenarios.crossref import check_references
    from loadtower.scenarios.loader import load_inventory, load_scenario

    proc = subprocess.run(
        [sys.executable, "-m", "loadtower", "sandbox", "status", "--dir", sandbox["dir"], "--json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    info = json.loads(proc.stdout)
    for section, key in [
        ("cassandra", "contact_points"),
        ("cassandra", "port"),
        ("cassandra", "username"),
        ("cassandra", "password"),
        ("prometheus", "url"),
        ("ssh", "host"),
        ("ssh", "port"),
        ("ssh", "user"),
        ("ssh", "key"),
        ("ssh", "known_hosts"),
    ]:
        assert info[section][key], f"{section}.{key} missing"
    inventory, inv_source = load_inventory(Path(info["inventory"]))
    assert set(inventory.with_role("db")) == {"db1"} | running_engine_hosts(info)
    if info["clickhouse"]["enabled"]:
        ch = info["clickhouse"]
        for key in ("url", "port", "username", "password", "password_file", "warning"):
            assert ch[key], f"clickhouse.{key} missing"
        assert ch["up"] and inventory.hosts["ch1"].port == ch["port"]
    assert set(inventory.with_role("agent")) == {"agent1"}
    path = resolve_scenario("scale-out-compaction")
    scenario, source = load_scenario(path)
    check_references(scenario, source, str(path), inventory, inv_source, info["inventory"])


def test_two_node_sandbox_forms_one_ring_and_down_leaves_nothing(tmp_path: Path) -> None:
    from loadtower.sandbox import Sandbox

    box = Sandbox(tmp_path / "ring", nodes=2, standby=0, first_address="127.0.1.1")
    try:
        with one_up_at_a_time():
            info = box.up(timeout=240)
        assert info["up"] and info["cassandra"]["contact_points"] == ["127.0.1.1", "127.0.1.2"]
        started = live_pids(info)
        clickhouse = info["clickhouse"]  # on when chdb is importable, on node 1's address
        assert not clickhouse["enabled"] or clickhouse["address"] == "127.0.1.1"
        mongodb = info["mongodb"]  # on when FerretDB is built, on node 1's address too
        assert not mongodb["enabled"] or mongodb["address"] == "127.0.1.1"
        # 2 nodes, node_exporter, prometheus, sshd (and the engine hosts: ch1, mongo1, ...)
        assert len(started) == 5 + len(running_engine_hosts(info))
        status = ""
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            status = box.node("status", 1)
            if sum(line.startswith("UN ") for line in status.splitlines()) == 2:
                break
            time.sleep(2)
        ring = [line.split()[1] for line in status.splitlines() if line.startswith("UN ")]
        assert sorted(ring) == ["127.0.1.1", "127.0.1.2"], status
    finally:
        box.down()
    assert live_pids(info) == []
    assert all(
        not Path(f"/proc/{pid}").exists()
        or Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
        for pid in started
    )
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "loadtower",
            "sandbox",
            "status",
            "--dir",
            str(tmp_path / "ring"),
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1 and json.loads(proc.stdout)["up"] is False
    assert box.down() is False  # idle-safe
