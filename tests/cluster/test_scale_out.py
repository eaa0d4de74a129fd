"""The built-in `scale-out-compaction` on the cluster sandbox: the standby db2 (dc1, rack
r2) joins under load, streams its ranges, then a major compaction runs under load."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loadtower.store import StoreReader
from tests.cluster.conftest import BUILTIN_SETS, FirstRun
from tests.orchestrator.run_helpers import only_run, run_scenario

pytestmark = [pytest.mark.integration, pytest.mark.alone,  # a node joining two DCs under load
              pytest.mark.timeout(1200)]


def test_scale_out_of_the_standby_under_load(
    cluster: dict, first_run: FirstRun, tmp_path: Path
) -> None:
    from loadtower.sandbox.cluster_sandbox import ClusterSandbox

    store = tmp_path / "runs.duckdb"
    done = run_scenario(
        "scale-out-compaction",
        Path(cluster["dir"]) / "inventory.toml",
        store,
        *BUILTIN_SETS,
        "phases[1].duration=3s",
        # what this test checks is db2 joining two DCs over TLS under load; the compaction
        # around it is checked on the loopback sandbox
        # (tests/orchestrator/test_scale_out_integration.py), searches in
        # tests/orchestrator/test_search_integration.py: here a short baseline, two
        # search steps each of the shortest length a step may have (3 s) and a quarter of
        # the rows (the load, the streaming and the flushes shorter)
        "phases[2].max_steps=2",
        "phases[4].max_steps=2",
        "phases[2].step_duration=3s",
        "phases[4].step_duration=3s",
        "dataset.records=5000",
        timeout=1000,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    reader = StoreReader(store)
    run = only_run(store)
    phase = next(p for p in reader.phases(run["id"]) if p["name"] == "add-node")
    added = json.loads(phase["result"]) if isinstance(phase["result"], str) else phase["result"]
    assert added["joined"] is True, added
    assert added["streamed_bytes"] > 0, added
    ops = [r for r in reader.op_seconds(run["id"], "add-node") if r["ops"] > 0]
    assert ops, "no ops during the scale-out"  # under load
    ring = ClusterSandbox(cluster["dir"]).node("status", 1)
    assert "UN  198.18.0.12 " in ring, ring  # db2 is Up/Normal in the ring
