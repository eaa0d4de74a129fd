"""The orchestrator's own CQL client: the queries it sends to a Cassandra or ScyllaDB node
itself (its version, a joined node's streams, the requests it coordinated, tombstones per
read).

They go through an SSH local forward to the host (``db_query.reach``: the orchestrator
needs no route to the database's port; the DB host reaches its own ``address:port``): one
connection of cassandra-driver's to that node alone (no cluster, no peer discovery).
Every wait has a timeout.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from loadtower.agents.tls import TlsOptions, wrap
from loadtower.engines.cassandra.agent.driver_session import connection_class
from loadtower.orchestrator.db_query import QUERY_TIMEOUT_S, reach
from loadtower.orchestrator.secrets import engine_password
from loadtower.orchestrator.tls_files import tls_options
from loadtower.scenarios.plan import Plan


class CqlQueryError(Exception):
    """A query on one node failed; the message names the node and why (a server error
    keeps its protocol code, e.g. ``(0x2200)`` for an invalid query)."""


def _server_error(exc: BaseException) -> str:
    from cassandra import InvalidRequest, Unauthorized

    code = {InvalidRequest: 0x2200, Unauthorized: 0x2100}.get(type(exc))
    text = str(exc) or type(exc).__name__
    return f"{text} (0x{code:04X})" if code else text


@functools.cache
def _connection_class() -> Any:
    """cassandra-driver's connection class (libev's or asyncore's), except that a node
    that closes the connection before it is ready (an SSH forward to a node that is not
    running) fails the connect at once: the driver's own class then waits out the whole
    connect timeout."""
    from cassandra.connection import ConnectionShutdown

    base = connection_class()
    base.initialize_reactor()

    class Connection(base):  # type: ignore[misc, valid-type]  # chosen at run time
        def close(self) -> None:
            super().close()
            if not self.connected_event.is_set():
                self.last_error = getattr(self, "last_error", None) or ConnectionShutdown(
                    "the connection was closed before it was ready")
                self.connected_event.set()

    return Connection


def _cql_open(
    host: str, port: int, username: str | None, password: str | None, timeout: float,
    tls: TlsOptions | None = None, node: tuple[str, str, int] | None = None,
) -> Any:
    """One connection of cassandra-driver's to the node at ``host:port`` alone (its
    protocol code, no cluster, no peer discovery), CQL v4, which Cassandra and ScyllaDB
    both speak. ``node``: (host name, address, port) of the node that ``host:port``
    reaches (an SSH forward's local end): the name TLS checks and errors use."""
    from cassandra.auth import PlainTextAuthProvider
    from cassandra.connection import DefaultEndPoint

    name, address, db_port = node or ("", host, port)
    where = f"{address}:{db_port}"
    if tls is not None:  # one handshake first: a wrong CA is one line naming the node
        try:
            sock = socket.create_connection((host, port), timeout=timeout)
        except OSError as exc:
            raise CqlQueryError(f"connecting to {where}: {exc}") from None
        sock.settimeout(timeout)
        wrap(sock, tls, address, name, where).close()
    factory = _connection_class()
    auth = PlainTextAuthProvider(username, password or "").new_authenticator(address) \
        if username else None
    try:
        return factory.factory(
            DefaultEndPoint(host, port), timeout, authenticator=auth, protocol_version=4,
            connect_timeout=timeout, ssl_context=tls.context() if tls else None,
            ssl_options={"server_hostname": address} if tls else None)
    except Exception as exc:  # noqa: BLE001 - refused, auth, TLS: one line naming the node
        raise CqlQueryError(f"connecting to {where}: {_server_error(exc)}") from None


def _cql_ask(conn: Any, cql: str, timeout: float, where: str) -> list[dict[str, Any]]:
    """The rows of one query on an open connection (``_cql_open``)."""
    from cassandra import ConsistencyLevel
    from cassandra.protocol import QueryMessage
    from cassandra.query import dict_factory

    query = QueryMessage(query=cql, consistency_level=ConsistencyLevel.ONE)
    try:
        answer = conn.wait_for_response(query, timeout=timeout)
    except Exception as exc:  # noqa: BLE001 - the server's answer, named
        raise CqlQueryError(f"querying {cql!r} on {where}: {_server_error(exc)}") from None
    return dict_factory(answer.column_names or [], answer.parsed_rows or [])


def _cql_many(
    host: str, port: int, username: str | None, password: str | None, cqls: list[str],
    timeout: float, tls: TlsOptions | None = None, node: tuple[str, str, int] | None = None,
) -> list[list[dict[str, Any]]]:
    """Each query's rows from the node at ``host:port`` alone, on one connection
    (``_cql_open``)."""
    _name, address, db_port = node or ("", host, port)
    conn = _cql_open(host, port, username, password, timeout, tls, node)
    try:
        return [_cql_ask(conn, cql, timeout, f"{address}:{db_port}") for cql in cqls]
    finally:
        conn.close()


@contextlib.asynccontextmanager
async def cql_connection(
    actions: Any, plan: Plan, host: str, timeout: float = QUERY_TIMEOUT_S
) -> AsyncIterator[Callable[[str], Awaitable[list[dict[str, Any]]]]]:
    """An ``ask(cql) -> rows`` over one connection to DB host `host` alone, kept open
    until the block ends (samplers that query every second); every wait is bounded."""
    inventory = plan.inventory
    engine = str(inventory.hosts[host].engine)
    creds = inventory.credentials(engine)
    password = engine_password(plan, engine)
    tls = tls_options(plan, engine)
    address, port = inventory.hosts[host].address, inventory.db_port(host, engine)
    async with reach(actions, host, address, port) as (point, local_port):
        conn = await asyncio.wait_for(asyncio.to_thread(
            _cql_open, point, local_port, creds.username, password, timeout, tls,
            (host, address, port)), timeout * 3)
        try:
            async def ask(cql: str) -> list[dict[str, Any]]:
                return await asyncio.wait_for(asyncio.to_thread(
                    _cql_ask, conn, cql, timeout, f"{address}:{port}"), timeout * 2)

            yield ask
        finally:
            conn.close()


async def cql_rows(
    actions: Any, plan: Plan, host: str, cql: str, timeout: float = QUERY_TIMEOUT_S
) -> list[dict[str, Any]]:
    """The rows of one CQL query on DB host `host` (text, ints, uuids, lists; others raw)."""
    return (await cql_queries(actions, plan, host, [cql], timeout))[0]


async def cql_queries(
    actions: Any, plan: Plan, host: str, cqls: list[str], timeout: float = QUERY_TIMEOUT_S
) -> list[list[dict[str, Any]]]:
    """The rows of each query, on one connection to DB host `host` alone."""
    async with cql_connection(actions, plan, host, timeout) as ask:
        return [await ask(cql) for cql in cqls]
