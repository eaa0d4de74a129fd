"""`sandbox up --cassandra-nodes 2`, `down`, then `up` with the default (1 node): the
ring still knows node 2, so `up` starts both (with one line saying so) instead of
leaving node 2 in the ring as down, where every query of its token ranges failed
(CassErrorLibNoHostsAvailable). Its own sandbox directory on 127.0.0.31-32."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from cassandra import OperationTimedOut, ReadTimeout
from cassandra.cluster import Cluster, Session
from cassandra.query import PreparedStatement

from tests.conftest import DOWN_TIMEOUT_S, UP_TIMEOUT_S, parse_info, run_cli, sandbox_down
from tests.sandbox.test_sandbox_integration import cql_session

pytestmark = [pytest.mark.integration, pytest.mark.timeout(900)]

FIRST = "127.0.0.31"
KEYS = 64
SCHEMA_AGREEMENT_S = 120


def read_one(session: Session, select: PreparedStatement, k: int, tries: int = 3) -> int | None:
    for attempt in range(tries):
        try:
            row = session.execute(select, (k,), timeout=30).one()
        except (ReadTimeout, OperationTimedOut):
            if attempt == tries - 1:
                raise
            continue
        return None if row is None else int(row.v)
    return None


def table_ids(cluster: Cluster, session: Session) -> dict[str, object]:
    """Each live node's own id for ring.t (None where it does not know the table yet)."""
    ids: dict[str, object] = {}
    for host in cluster.metadata.all_hosts():
        if not host.is_up:
            continue
        try:
            row = session.execute(
                "SELECT id FROM system_schema.tables WHERE keyspace_name = 'ring' "
                "AND table_name = 't'", timeout=10, host=host).one()
        except (OperationTimedOut, ReadTimeout):  # a busy node: asked again, bounded
            row = None
        ids[str(host.address)] = None if row is None else row.id
    return ids


def wait_for_the_table_on_every_node(cluster: Cluster, session: Session) -> None:
    """The driver's schema agreement reads the peers' schema versions as one node's gossip
    saw them; a CI run had it agree and node 2 still refused the first write for a table
    it did not know (INCOMPATIBLE_SCHEMA). Ask each node itself until all hold the same
    table."""
    deadline = time.monotonic() + SCHEMA_AGREEMENT_S
    ids = table_ids(cluster, session)
    while len(ids) < 2 or None in ids.values() or len(set(ids.values())) != 1:
        assert time.monotonic() < deadline, (
            f"the nodes did not all hold ring.t within {SCHEMA_AGREEMENT_S} s: {ids}")
        time.sleep(0.5)
        ids = table_ids(cluster, session)


@pytest.fixture
def directory(tmp_path: Path) -> Iterator[Path]:
    directory = tmp_path / "ring-sandbox"
    try:
        yield directory
    finally:
        sandbox_down(directory)


def up(directory: Path, *extra: str):  # noqa: ANN201
    return run_cli(["sandbox", "up", "--dir", str(directory), "--first-address", FIRST,
                    "--standby", "0", "--no-clickhouse", "--heap", "768M", "--timeout", "240",
                    "--json", *extra], timeout=UP_TIMEOUT_S)


def test_up_after_a_bigger_ring_starts_every_node_of_it(directory: Path) -> None:
    first = parse_info(up(directory, "--cassandra-nodes", "2"))
    assert [n["state"] for n in first["cassandra"]["nodes"]] == ["up", "up"]
    down = run_cli(["sandbox", "down", "--dir", str(directory)], timeout=DOWN_TIMEOUT_S)
    assert down.returncode == 0, down.stderr[-2000:]

    again = up(directory)  # the default: 1 node
    info = parse_info(again)
    assert ("its Cassandra ring has 2 nodes (from an earlier `up`), 1 asked: starting all 2"
            in again.stderr), again.stderr
    nodes = info["cassandra"]["nodes"]
    assert [(n["address"], n["state"], n["standby"]) for n in nodes] == [
        ("127.0.0.31", "up", False), ("127.0.0.32", "up", False)]
    inventory = (directory / "inventory.toml").read_text()
    assert 'address = "127.0.0.32"' in inventory

    # every token range has a live owner: writes and reads of keys all over the ring work
    # The driver waits for both nodes to agree on the new schema before DDL returns, 10 s
    # by default; a CI machine took longer and node 2 refused the first write for a table
    # it did not know yet (INCOMPATIBLE_SCHEMA). Wait longer, and say so if it never agrees.
    cluster, session = cql_session(info, max_schema_agreement_wait=SCHEMA_AGREEMENT_S)
    try:
        for statement in ("CREATE KEYSPACE IF NOT EXISTS ring WITH replication = "
                          "{'class': 'SimpleStrategy', 'replication_factor': 1}",
                          "CREATE TABLE IF NOT EXISTS ring.t (k int PRIMARY KEY, v int)"):
            done = session.execute(statement, timeout=SCHEMA_AGREEMENT_S + 60)
            assert done.response_future.is_schema_agreed, (
                f"the 2 nodes did not agree on the schema within {SCHEMA_AGREEMENT_S} s "
                f"after: {statement}")
        wait_for_the_table_on_every_node(cluster, session)
        insert = session.prepare("INSERT INTO ring.t (k, v) VALUES (?, ?)")
        for k in range(KEYS):
            session.execute(insert, (k, k * 2), timeout=30)
        # Read key by key: a full scan visits both nodes under the server's 10 s range
        # timeout, and a busy CI machine once let it lapse (ReadTimeout, "received only 0
        # responses") with both nodes up. A timeout is retried; a token range without a live
        # owner answers Unavailable or NoHostAvailable at once, which is not.
        select = session.prepare("SELECT v FROM ring.t WHERE k = ?")
        rows = {k: read_one(session, select, k) for k in range(KEYS)}
        owners = {str(h.address) for h in cluster.metadata.all_hosts() if h.is_up}
    finally:
        cluster.shutdown()
    assert rows == {k: k * 2 for k in range(KEYS)}
    assert owners == {"127.0.0.31", "127.0.0.32"}
