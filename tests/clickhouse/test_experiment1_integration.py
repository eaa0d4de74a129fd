"""Experiment 1 end to end: the built-in recipes-mix on the sandbox's Cassandra (db1) and
its ClickHouse host (ch1), through the real orchestrator (SSH to the agent host, Locust
master and worker), in one run; then `loadtower compare RUN` prints both engines' rows.

ch1 is what `loadtower sandbox up` starts when chdb is importable: the real ClickHouse
engine (chdb) behind the sandbox's HTTP endpoint, with its own login, started and
stopped by the host's `start`/`stop`/`restart` actions over SSH as a `clickhouse server`
would be. Its timings mean nothing (one lock, a Python HTTP server), and the run says so
in a warning event: the test checks what ran and what was recorded, never how fast.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from loadtower.store import StoreReader
from tests.orchestrator.run_helpers import only_run, run_scenario

pytestmark = [pytest.mark.integration, pytest.mark.timeout(900)]

MIX = ("read", "insert", "insert_batch", "delete", "delete_batch")
RECORDS = 300
DATABASE = "lt_exp1_test"  # the keyspace and the ClickHouse database of this test


def action(inventory: Path, name: str) -> tuple[int, str, str]:
    """Run ch1's declared action over SSH, as the orchestrator's phases do."""
    from loadtower.fleet.ssh_pool import HostPool
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


def answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/ping", timeout=2) as reply:
            return reply.read() == b"Ok.\n"
    except OSError:
        return False


@pytest.fixture()
def clickhouse(sandbox: dict) -> dict:
    """The sandbox's ClickHouse host, its test database dropped (a MergeTree table keeps
    every insert of earlier runs)."""
    ch = sandbox.get("clickhouse") or {}
    if not ch.get("enabled"):
        pytest.skip("the sandbox runs no ClickHouse host (chdb-core not importable?)")
    import clickhouse_connect

    client = clickhouse_connect.get_client(
        host=ch["address"], port=ch["port"], username=ch["username"], password=ch["password"]
    )
    client.command(f"DROP DATABASE IF EXISTS {DATABASE}")
    client.close()
    return ch


def test_recipes_mix_on_cassandra_and_clickhouse_in_one_run(
    sandbox: dict, clickhouse: dict, tmp_path: Path
) -> None:
    inventory = Path(sandbox["inventory"])
    password = clickhouse["password"]
    # the host's own actions over SSH: restart (stop + start), then status
    status, out, err = action(inventory, "restart")
    assert status == 0, err
    assert "up (pid" in out and answers(clickhouse["url"])
    status, out, _err = action(inventory, "status")
    assert status == 0 and out.startswith(f"clickhouse {clickhouse['address']}:")

    store = tmp_path / "runs.duckdb"
    done = run_scenario(
        "recipes-mix",
        inventory,
        store,
        f"target.keyspace={DATABASE}",
        f"dataset.records={RECORDS}",
        "phases[0].concurrency=4",
        "phases[2].duration=8s",
        "phases[2].rate=10",
        "phases[3].start_rate=10",  # the search: two steps of 3 s
        "phases[3].max_steps=2",
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
    assert ch_compact["tables"][f"{DATABASE}.recipes"] > 0
    events = reader.events(run["id"])
    messages = [e["message"] for e in events]
    assert any(
        m.startswith(f"compact on ch1: OPTIMIZE TABLE {DATABASE}.recipes FINAL done in")
        for m in messages
    ), messages
    assert any(m.startswith("compact on db1: done in") for m in messages)

    # the run says, for the ClickHouse target only, that the sandbox's timings mean nothing
    meaningless = [e for e in events if "TIMINGS MEAN NOTHING" in e["message"]]
    assert [(e["kind"], e["host"]) for e in meaningless] == [("warning", "ch1")], meaningless

    # the ClickHouse password (read for the second target) is nowhere in the store
    for sql in (
        f"SELECT count(*) FROM events WHERE message LIKE '%{password}%' "
        f"OR data LIKE '%{password}%'",
        f"SELECT count(*) FROM logs WHERE text LIKE '%{password}%'",
        f"SELECT count(*) FROM runs WHERE inventory_text LIKE '%{password}%'",
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
