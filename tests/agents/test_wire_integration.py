"""The wire sender against the sandbox's real Cassandra: both ways of sending give the
same ops without errors, and set-up failures name the host and the reason."""

from __future__ import annotations

import pytest

from loadtower.agents.cql.wire_conn import WireConnError
from loadtower.agents.cql.wire_sender import WireSession
from tests.agents.agent_cli import op_totals, run_agent

pytestmark = pytest.mark.integration
RECIPE_OPS = {"read", "insert", "insert_batch", "delete", "delete_batch"}


@pytest.mark.parametrize("io", ["wire", "driver"])
def test_recipes_mix_at_a_fixed_rate(sandbox: dict, io: str) -> None:
    """Batches, a composite partition key (float, uuid) and deletes, open model."""
    lines, summary, status = run_agent(
        sandbox, "--driver", "acsylla", "--native-io", io, "--keyspace", "lt_wire_recipes",
        "--workload", "recipes", "--records", "2000", "--load", "--rate", "200",
        "--duration", "5",
    )
    assert status == 0 and summary["errors"] == 0
    run = op_totals(lines, "run")
    assert set(run) == RECIPE_OPS
    total = sum(t["ops"] for t in run.values())
    assert 0.8 * 1000 <= total <= 1.1 * 1000, total
    assert all(t["errors"] == 0 for t in run.values())


def _connect(sandbox: dict, **change: object) -> WireSession:
    cass = sandbox["cassandra"]
    args = {"contact_points": cass["contact_points"], "port": cass["port"],
            "username": cass["username"], "password": cass["password"], "consistency": "ONE"}
    args.update(change)
    session = WireSession()
    session.connect(**args)  # type: ignore[arg-type]
    return session


def test_set_up_failures_name_the_host_and_reason(sandbox: dict) -> None:
    cass = sandbox["cassandra"]
    where = f"{cass['contact_points'][0]}:{cass['port']}"
    with pytest.raises(WireConnError, match=f"authenticating on {where}: .*password"):
        _connect(sandbox, password="not-the-password")
    with pytest.raises(WireConnError, match=f"{where} asks for credentials"):
        _connect(sandbox, username=None)
    with pytest.raises(WireConnError, match="connecting to 127.0.0.1:1: "):
        _connect(sandbox, contact_points=["127.0.0.1"], port=1)
    session = _connect(sandbox)
    try:
        assert session.hosts[0] == cass["contact_points"][0]
        assert session.ring.tokens  # the ring came from the system tables
        with pytest.raises(WireConnError, match="preparing 'SELECT nope FROM system.local'"):
            session.prepare({"bad": "SELECT nope FROM system.local"})
    finally:
        session.close()
