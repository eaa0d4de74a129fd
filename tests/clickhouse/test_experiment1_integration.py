"""Experiment 1 end to end: the built-in recipes-mix on the sandbox's Cassandra and on a
ClickHouse host, through the real orchestrator (SSH to the agent host, Locust master and
worker), in one run; then `loadtower compare RUN` prints both engines' rows.

The ClickHouse host serves the real ClickHouse engine (chdb) behind the suite's HTTP
endpoint, started and stopped by the host's own `start`/`stop` actions over SSH, as a
`clickhouse server` would be. Its timings mean nothing (one lock, a Python HTTP server):
the test checks what ran and what was recorded, never how fast.
"""

from __future__ import annotations

import asyncio
import ipaddress
import json
import os
import shlex
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from loadtower.store import StoreReader
from tests.clickhouse import chdb_service
from tests.orchestrator.run_helpers import only_run, run_scenario

pytestmark = [pytest.mark.integration, pytest.mark.timeout(900)]

ROOT = Path(__file__).resolve().parents[2]
MIX = ("read", "insert", "insert_batch", "delete", "delete_batch")
RECORDS = 300


def _free_port(address: str) -> int:
    with socket.socket() as sock:
        sock.bind((address, 0))
        return int(sock.getsockname()[1])


def _service(action: str, directory: Path, extra: str = "") -> str:
    argv = [sys.executable, "-m", "tests.clickhouse.chdb_service", action, "--dir", str(directory)]
    return f"cd {shlex.quote(str(ROOT))} && {shlex.join(argv)}{extra}"


def clickhouse_inventory(sandbox: dict, directory: Path) -> tuple[Path, str, int]:
    """The sandbox's inventory plus a ClickHouse host (login/password, own HTTP port)."""
    first = ipaddress.IPv4Address(sandbox["cassandra"]["contact_points"][0])
    address = str(first + 8)  # in the sandbox's own loopback range
    port = _free_port(address)
    password = directory / "password"
    password.write_text("ch-bench-secret\n")
    start = f" --address {{address}} --port {port} --password-file {shlex.quote(str(password))}"
    node_exporter = sandbox["node_exporter"]["instance"]
    text = Path(sandbox["inventory"]).read_text() + (
        "\n[clickhouse]\n"
        'username = "bench"\n'
        f"password_file = {json.dumps(str(password))}\n\n"
        "[hosts.ch1]\n"
        f'address = "{address}"\n'
        f"port = {port}\n"
        'ssh_host = "127.0.0.1"\n'
        'roles = ["db"]\n'
        'engine = "clickhouse"\n'
        f'node_exporter = "{node_exporter}"\n\n'
        "[hosts.ch1.actions]\n"
        f"start = {json.dumps(_service('start', directory, start + ' --user bench'))}\n"
        f"stop = {json.dumps(_service('stop', directory))}\n"
        f"status = {json.dumps(_service('status', directory))}\n"
    )
    inventory = directory / "inventory.toml"
    inventory.write_text(text)
    return inventory, address, port


def action(inventory: Path, name: str) -> tuple[int, str, str]:
    """Run ch1's declared action over SSH, as the orchestrator's phases do."""
    from loadtower.agents.hosts import HostPool
    from loadtower.scenarios.loader import load_inventory

    async def run() -> tuple[int, str, str]:
        inv, _ = load_inventory(inventory)
        pool = HostPool(inv)
        try:
            host = inv.hosts["ch1"]
            return await pool.run_action("ch1", name, address=host.address, host="ch1")
        finally:
            await pool.close()

    return asyncio.run(asyncio.wait_for(run(), 120))


def answers(address: str, port: int) -> bool:
    try:
        with urllib.request.urlopen(f"http://{address}:{port}/ping", timeout=2) as reply:
            return reply.read() == b"Ok.\n"
    except OSError:
        return False


def test_recipes_mix_on_cassandra_and_clickhouse_in_one_run(sandbox: dict, tmp_path: Path) -> None:
    directory = tmp_path / "clickhouse"
    directory.mkdir()
    inventory, address, port = clickhouse_inventory(sandbox, directory)
    try:
        status, out, err = action(inventory, "start")
        assert status == 0, err
        assert "started" in out and answers(address, port)
        assert action(inventory, "status")[:2] == (
            0,
            f"running (pid {chdb_service.pid_of(directory)})\n",
        )

        store = tmp_path / "runs.duckdb"
        done = run_scenario(
            "recipes-mix",
            inventory,
            store,
            f"dataset.records={RECORDS}",
            "phases[0].concurrency=4",
            "phases[2].duration=8s",
            "phases[2].rate=15",
            "phases[3].rates=[10]",
            "phases[3].step_duration=3s",
            timeout=700,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        run = only_run(store)
        assert run["status"] == "completed"
        reader = StoreReader(store)
        phases = {p["name"]: p for p in reader.phases(run["id"])}
        steps = ["1-load", "compact", "mix", "saturation"]
        assert list(phases) == [f"{t}:{s}" for t in ("cassandra", "clickhouse") for s in steps]
        assert phases["clickhouse:mix"]["params"]["engine"] == "clickhouse"

        # load: Cassandra one record per insert, ClickHouse blocks of batch_size rows
        cass_load = phases["cassandra:1-load"]["result"]
        assert (cass_load["inserted_ops"], cass_load["errors"]) == (RECORDS, 0)
        ch_load = phases["clickhouse:1-load"]["result"]
        assert (ch_load["rows"], ch_load["rows_per_op"], ch_load["errors"]) == (RECORDS, 100, 0)
        assert ch_load["inserted_ops"] == RECORDS // 100

        # compaction: nodetool compact on db1, OPTIMIZE TABLE ... FINAL on ch1
        assert phases["cassandra:compact"]["result"]["hosts"]["db1"]["exit_status"] == 0
        ch_compact = phases["clickhouse:compact"]["result"]["hosts"]["ch1"]
        assert ch_compact["exit_status"] == 0, ch_compact
        assert ch_compact["tables"]["lt_recipes.recipes"] > 0
        events = [e["message"] for e in reader.events(run["id"])]
        assert any(
            m.startswith("compact on ch1: OPTIMIZE TABLE lt_recipes.recipes FINAL done in")
            for m in events
        ), events
        assert any(m.startswith("compact on db1: done in") for m in events)

        # the ClickHouse password (read for the second target) is nowhere in the store
        for sql in (
            "SELECT count(*) FROM events WHERE message LIKE '%ch-bench-secret%' "
            "OR data LIKE '%ch-bench-secret%'",
            "SELECT count(*) FROM logs WHERE text LIKE '%ch-bench-secret%'",
            "SELECT count(*) FROM runs WHERE inventory_text LIKE '%ch-bench-secret%'",
        ):
            assert reader.sql(sql)[1] == [(0,)], sql

        # node metrics of the ClickHouse host, as for any host
        assert any(r["host"] == "ch1" for r in reader.node_seconds(run["id"]))

        # experiment 1's table, both engines' rows
        table = subprocess.run(
            [sys.executable, "-m", "loadtower", "compare", run["id"], "--store", str(store)],
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, "COLUMNS": "160"},
        )
        assert table.returncode == 0, table.stderr
        assert "cassandra" in table.stdout and "clickhouse" in table.stdout
        as_json = subprocess.run(
            [sys.executable, "-m", "loadtower", "compare", run["id"], "--store", str(store)]
            + ["--phase", "mix", "--json"],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert as_json.returncode == 0, as_json.stderr
        rows = {(r["op"], r["target"]): r for r in json.loads(as_json.stdout)}
        assert set(rows) == {(op, t) for op in (*MIX, "total") for t in ("cassandra", "clickhouse")}
        for (op, target), r in rows.items():
            assert r["engine"] == target and r["ops"] > 0 and r["errors"] == 0, (op, target, r)
            assert 0 < r["min_ms"] <= r["median_ms"] <= r["p90_ms"], (op, target, r)
        for target in ("cassandra", "clickhouse"):
            total = sum(rows[(op, target)]["ops"] for op in MIX)
            assert rows[("total", target)]["ops"] == total
    finally:
        try:
            stopped = action(inventory, "stop")
        except Exception as exc:  # noqa: BLE001 - reported below; the server must stop anyway
            stopped = (255, "", repr(exc))
        if chdb_service.pid_of(directory):  # the action failed: stop it here, whatever happened
            chdb_service.main(["stop", "--dir", str(directory)])
    assert stopped[0] == 0 and stopped[1].startswith("stopped")
    assert not answers(address, port)
    assert action(inventory, "status")[:2] == (3, "stopped\n")
