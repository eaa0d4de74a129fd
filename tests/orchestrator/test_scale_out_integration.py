"""`scale-out-compaction` on a 1-node sandbox (plus a standby node), through SSH.

With LOADTOWER_TEST_SANDBOX set, the test uses that sandbox when it runs exactly one
node and has a standby that never ran (else it is skipped), and gives it back as it
found it: the joined node is decommissioned (its data streams back, so no range is left
on a dead node), stopped through the inventory's `stop` action, and its directory
removed, so it is a fresh standby again. Otherwise it brings up a sandbox of its own.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from loadtower.store import StoreReader
from tests.conftest import live_pids, one_up_at_a_time
from tests.orchestrator.run_helpers import only_run, run_scenario
from tests.sandbox.engine_hosts import engine_hosts

pytestmark = [pytest.mark.integration, pytest.mark.alone,  # a node joining under load, a compaction
              pytest.mark.timeout(900)]


def _fresh_standby(info: dict) -> dict | None:
    """The standby node of a sandbox running exactly one node, if it never ran."""
    nodes = info["cassandra"]["nodes"]
    up = [n for n in nodes if n["state"] == "up"]
    standby = [n for n in nodes if n["state"] == "standby"]
    if len(up) != 1 or not standby:
        return None
    home = Path(info["dir"]) / "cassandra" / f"node{standby[0]['index']}"
    return standby[0] if not home.exists() else None


def _give_back(directory: Path, node: dict) -> None:
    """Decommission the joined node, stop it through the inventory's `stop` action and
    remove its directory: the sandbox is a 1-node one with a fresh standby again."""
    from loadtower.sandbox import Sandbox
    from loadtower.sandbox import state as st
    from loadtower.scenarios.loader import load_inventory

    box = Sandbox(directory)
    index = node["index"]
    if box.info()["cassandra"]["nodes"][index - 1]["state"] == "up":
        spec = box._spec(st.load(directory), index)
        # --force: system_distributed wants 3 replicas and never had them on the sandbox
        done = spec.nodetool("decommission", "--force", timeout=600)
        assert done.returncode == 0, done.stderr or done.stdout
    inventory, _ = load_inventory(directory / "inventory.toml")
    stop = inventory.hosts[f"db{index}"].actions["stop"]
    done = subprocess.run(shlex.split(stop), capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    shutil.rmtree(directory / "cassandra" / f"node{index}", ignore_errors=True)
    ring = box.node("status", 1)
    assert node["address"] not in ring, ring


@pytest.fixture()
def small_cluster(tmp_path: Path) -> Iterator[dict]:
    from loadtower.sandbox import Sandbox

    reuse = os.environ.get("LOADTOWER_TEST_SANDBOX")
    if reuse:
        info = Sandbox(reuse).info()
        node = _fresh_standby(info) if info.get("up") else None
        if node is None:
            pytest.skip(f"{reuse} does not run exactly one node with a standby that never ran")
        try:
            yield info
        finally:
            _give_back(Path(info["dir"]), node)
        return
    box = Sandbox(tmp_path / "box", nodes=1, standby=1, first_address="127.0.2.1")
    try:
        with one_up_at_a_time():
            info = box.up(timeout=240)
        yield info
    finally:
        info = box.info()
        box.down()
        assert live_pids(info) == []


def _result(reader: StoreReader, run_id: str, name: str) -> dict:
    phase = next(p for p in reader.phases(run_id) if p["name"] == name)
    return json.loads(phase["result"]) if isinstance(phase["result"], str) else phase["result"]


def test_scale_out_then_compaction_under_load(small_cluster: dict, tmp_path: Path) -> None:
    store = tmp_path / "runs.duckdb"
    inventory = Path(small_cluster["dir"]) / "inventory.toml"
    done = run_scenario(
        "scale-out-compaction", inventory, store, "phases[1].duration=3s",
        # what this test checks is the join and the compaction under load: the baseline
        # before them is short, the searches around them (checked in
        # test_search_integration.py) get three steps each of the shortest length a
        # step may have (3 s), and a quarter of the rows (the load, the streaming and the
        # decommission shorter)
        "phases[2].max_steps=3", "phases[4].max_steps=3", "phases[2].step_duration=3s",
        "phases[4].step_duration=3s", "dataset.records=5000",
        timeout=800,
    )
    assert done.returncode == 0, done.stderr
    run = only_run(store)
    reader = StoreReader(store)

    added = _result(reader, run["id"], "add-node")
    assert added["joined"] is True, added
    assert added["join_duration_s"] > 0 and added["status_polls"] >= 1
    # streaming, as the joined node recorded its Bootstrap streams
    assert added["streaming_source"] == "system_views.streaming", added
    assert added["streaming_status"] == "success" and added["streamed_bytes"] > 0, added
    assert 0 < added["streaming_duration_s"] < added["join_duration_s"], added
    from loadtower.sandbox import Sandbox

    ring = Sandbox(small_cluster["dir"]).node("status", 1)
    addresses = [n["address"] for n in small_cluster["cassandra"]["nodes"]]
    assert all(f"UN  {a} " in ring for a in addresses), ring
    _assert_background_load_and_its_errors(reader, run["id"], added)

    compaction = _result(reader, run["id"], "major-compaction")
    assert compaction["hosts"]["db1"]["exit_status"] == 0
    assert compaction["hosts"]["db2"]["exit_status"] == 0
    assert compaction["hosts"]["db1"]["compaction_s"] > 0

    events = reader.events(run["id"])
    joined = [e for e in events if e["kind"] == "scale_out" and "is UN" in e["message"]]
    assert joined and "joined in" in joined[0]["message"]
    assert "streaming took" in joined[0]["message"]
    _cols, logs = reader.sql(
        f"SELECT host, stream, text FROM logs WHERE run_id = '{run['id']}' "
        "AND stream LIKE 'action:%'"
    )
    streams = {(host, stream) for host, stream, _text in logs}
    assert ("db2", "action:start") in streams  # `node 2: up`, from the start action
    compacted = [e for e in events if e["kind"] == "compaction"]
    assert {e["host"] for e in compacted} == {"db1", "db2"}
    assert all("took" in e["message"] for e in compacted)

    # background load ran through both phases; its seconds (and any errors) are stored
    for name in ("add-node", "major-compaction"):
        seconds = [r for r in reader.op_seconds(run["id"], name)]
        assert len({r["ts"] for r in seconds}) >= 8, name
    nodes = {r["host"] for r in reader.node_seconds(run["id"])}
    # the new node is sampled once it is up (and the sandbox's engine hosts, ch1 ..., if any)
    assert nodes - engine_hosts() == {"db1", "db2"}


def _assert_background_load_and_its_errors(reader: StoreReader, run_id: str, added: dict) -> None:
    """The load ran every second of the join, and the phase's error counts are those of
    the stored seconds (errors are counted, by class, not fatal)."""
    seconds: dict[int, dict[str, int]] = {}
    for row in reader.op_seconds(run_id):
        entry = seconds.setdefault(int(row["ts"]), {"ops": 0, "errors": 0})
        entry["ops"] += int(row["ops"])
        entry["errors"] += int(row["errors"])
    start = added["during_from"]
    joined_by = start + int(added["join_duration_s"])
    missing = [ts for ts in range(start + 1, joined_by) if not seconds.get(ts, {}).get("ops")]
    assert not missing, f"no ops stored in seconds {missing} of the join"
    for key in ("errors_before", "errors_during"):
        assert isinstance(added[key], int) and added[key] >= 0, added
    assert sum(added["errors_by_class_during"].values()) == added["errors_during"]
    stored = sum(e["errors"] for ts, e in seconds.items() if ts >= start)
    assert stored >= added["errors_during"], (stored, added)  # late lines only add
