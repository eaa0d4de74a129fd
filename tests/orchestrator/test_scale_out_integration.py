"""`scale-out-compaction` on its own 1-node sandbox (plus a standby node), through SSH."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from loadtower.store import StoreReader
from tests.conftest import live_pids
from tests.orchestrator.run_helpers import only_run, run_scenario

pytestmark = [pytest.mark.integration, pytest.mark.timeout(900)]


@pytest.fixture()
def small_cluster(tmp_path: Path) -> Iterator[dict]:
    from loadtower.sandbox import Sandbox

    box = Sandbox(tmp_path / "box", cassandra_nodes=1, standby=1, first_address="127.0.2.1")
    try:
        yield box.up(timeout=240)
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
        "scale-out-compaction", inventory, store, "phases[1].duration=8s", timeout=800
    )
    assert done.returncode == 0, done.stderr
    run = only_run(store)
    reader = StoreReader(store)

    added = _result(reader, run["id"], "add-node")
    assert added["joined"] is True, added
    assert added["join_duration_s"] > 0
    status = small_cluster["dir"]
    from loadtower.sandbox import Sandbox

    ring = Sandbox(status).node("status", 1)
    assert ring.count("UN  127.0.2.") == 2, ring

    compaction = _result(reader, run["id"], "major-compaction")
    assert compaction["hosts"]["db1"]["exit_status"] == 0
    assert compaction["hosts"]["db2"]["exit_status"] == 0
    assert compaction["hosts"]["db1"]["compaction_s"] > 0

    events = reader.events(run["id"])
    joined = [e for e in events if e["kind"] == "scale_out" and "is UN" in e["message"]]
    assert joined and "joined in" in joined[0]["message"]
    compacted = [e for e in events if e["kind"] == "compaction"]
    assert {e["host"] for e in compacted} == {"db1", "db2"}
    assert all("took" in e["message"] for e in compacted)

    # background load ran through both phases; its seconds (and any errors) are stored
    for name in ("add-node", "major-compaction"):
        seconds = [r for r in reader.op_seconds(run["id"], name)]
        assert len({r["ts"] for r in seconds}) >= 8, name
    nodes = {r["host"] for r in reader.node_seconds(run["id"])}
    assert nodes == {"db1", "db2"}  # the new node is sampled once it is up
