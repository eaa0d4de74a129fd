"""The orchestrator's own CQL query client (engines/cassandra/orchestrator/cql_query.py: one
cassandra-driver connection) without a database: how a node that cannot answer is named."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import pytest

from loadtower.engines.cassandra.orchestrator.cql_query import CqlQueryError, _cql_many


@pytest.fixture
def closing_listener() -> Iterator[int]:
    """A port that accepts and at once closes, as an SSH forward to a stopped node does."""
    server = socket.create_server(("127.0.0.1", 0))
    server.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1]
    finally:
        stop.set()
        thread.join(5)
        server.close()


def test_a_node_that_closes_the_connection_fails_it_at_once(closing_listener: int) -> None:
    """Not the driver's 'Timed out creating connection' after the whole timeout."""
    with pytest.raises(CqlQueryError) as info:
        _cql_many("127.0.0.1", closing_listener, "u", "p", ["SELECT 1"], 30,
                  node=("db2", "198.18.0.12", 9042))
    message = str(info.value)
    assert message.startswith("connecting to 198.18.0.12:9042: "), message
    # the far end's close, seen as the driver reads (closed before it was ready) or, about
    # one time in 40 here, as it writes its STARTUP (reset by peer): never a timeout
    assert message.endswith(("the connection was closed before it was ready",
                             "Connection reset by peer")), message


def test_a_refused_connection_names_the_node() -> None:
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
    with pytest.raises(CqlQueryError, match=f"^connecting to 127.0.0.1:{port}: .*refused"):
        _cql_many("127.0.0.1", port, None, None, ["SELECT 1"], 5)
