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
    # the rate held: over the full seconds of the run (not the first and last), the ops
    # completed so far stay within a quarter second's worth of RATE per second. A node's
    # or the machine's stall under a second shifts completions into the next second and
    # the open model catches up (CI: 232, 371, 301 at 300/s, the +71 the -68 sent late);
    # a rate 10% short falls out of the bound within three seconds.
    per_second = [sum(s["ops"] for s in x["ops"].values()) for x in intervals(lines, "run")]
    inner = per_second[1:-1]
    so_far = [sum(inner[: k + 1]) - RATE * (k + 1) for k in range(len(inner))]
    assert len(inner) >= 3 and all(abs(d) <= RATE / 4 for d in so_far), per_second
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
