"""The Rust load core (native_io "rust", the default) against the sandbox's Cassandra,
through the agent engine (`loadtower agent run`)."""

from __future__ import annotations

import pytest

from tests.agents.agent_cli import intervals, op_totals, run_agent

pytestmark = pytest.mark.integration
core = pytest.importorskip("loadtower_core", reason="the Rust core is not built (no cargo)")

RATE, SECONDS = 300, 6


def test_ycsb_a_open_model_on_the_rust_core(sandbox: dict) -> None:
    lines, summary, status = run_agent(
        sandbox, "--keyspace", "lt_rust_a", "--workload", "ycsb-a", "--records", "2000",
        "--load", "--rate", str(RATE), "--duration", str(SECONDS),
    )
    assert status == 0 and summary["errors"] == 0, summary
    run = op_totals(lines, "run")
    assert set(run) == {"read", "update"}
    assert all(t["errors"] == 0 for t in run.values()), run
    total = sum(t["ops"] for t in run.values())
    assert 0.9 * RATE * SECONDS <= total <= 1.1 * RATE * SECONDS, total
    # the rate held: every full second of the run (not the first and last) near RATE
    per_second = [sum(s["ops"] for s in x["ops"].values()) for x in intervals(lines, "run")]
    inner = per_second[1:-1]
    assert inner and all(0.9 * RATE <= n <= 1.1 * RATE for n in inner), per_second
    # every op the core scheduled is counted once (or given up at the drain)
    drains = [x for x in lines if x.get("kind") == "drain" and x["data"]["phase"] == "run"]
    counts = drains[-1]["data"]["core"]
    assert counts["intended"] == counts["counted"] + counts["abandoned"] == total, counts
    # the path that ran, as an event with its data
    paths = [x for x in lines if x.get("kind") == "cql_path"]
    assert paths, "no cql_path event"
    data = paths[-1]["data"]
    assert data["driver"] == "scylla-rust-driver" and data["tls"] is False
    assert data["per_node_in_flight"] >= 1 and "v4" in data["protocol"]
