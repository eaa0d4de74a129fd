"""The reference path: the DataStax cassandra-driver.

Prepared statements, a configurable consistency level, token-aware routing and one
Cluster/Session per process. The driver runs its own reactor thread (libev, or
asyncore where libev is missing), NOT gevent: loadtower's agent does not monkey-patch,
so Locust's greenlets never share sockets with the driver (the naive GeventConnection
set-up is what drops connections under load). Results cross to the engine's asyncio
loop with one ``call_soon_threadsafe`` per batch of completions.
"""

from __future__ import annotations

import asyncio
import collections
from typing import Any

from loadtower.agents.tls import TlsOptions
from loadtower.engines.cassandra.agent.acsylla_session import AcsyllaSession
from loadtower.engines.cassandra.agent.ddl_retry import ATTEMPT_S, with_retries


def connection_class() -> Any:
    """libev's reactor where it is built, else asyncore's."""
    try:
        from cassandra.io.libevreactor import LibevConnection

        return LibevConnection
    except Exception:  # noqa: BLE001 - libev extension not built: asyncore reactor
        from cassandra.io.asyncorereactor import AsyncoreConnection

        return AsyncoreConnection


class DriverSession:
    name = "cassandra-driver"

    def __init__(self) -> None:
        self.cluster: Any = None
        self.session: Any = None
        self.prepared: dict[str, Any] = {}
        self.loop: asyncio.AbstractEventLoop | None = None
        self.consistency: Any = None
        self._done: collections.deque = collections.deque()
        self._wake_pending = False

    async def connect(
        self,
        contact_points: list[str],
        port: int,
        username: str | None,
        password: str | None,
        consistency: str,
        io_threads: int = 1,
        tls: TlsOptions | None = None,
        local_dc: str | None = None,
    ) -> None:
        """``tls``: an SSLContext with the CA, the client certificate and (with
        verify_hostname) the node's address checked; ``local_dc``: token-aware routing
        over that data centre's nodes (other DCs' only for non-local consistency)."""
        from cassandra import ConsistencyLevel
        from cassandra.auth import PlainTextAuthProvider
        from cassandra.cluster import EXEC_PROFILE_DEFAULT, Cluster, ExecutionProfile
        from cassandra.policies import DCAwareRoundRobinPolicy, TokenAwarePolicy

        self.loop = asyncio.get_running_loop()
        self.consistency = getattr(ConsistencyLevel, consistency)
        profile = ExecutionProfile(
            load_balancing_policy=TokenAwarePolicy(DCAwareRoundRobinPolicy(local_dc or "")),
            consistency_level=self.consistency,
            request_timeout=12.0,
        )
        auth = PlainTextAuthProvider(username, password or "") if username else None
        self.cluster = Cluster(
            contact_points,
            port=port,
            auth_provider=auth,
            execution_profiles={EXEC_PROFILE_DEFAULT: profile},
            connection_class=connection_class(),
            connect_timeout=10,
            protocol_version=5,
            ssl_context=tls.context() if tls else None,
        )
        self.session = await asyncio.to_thread(self.cluster.connect)

    async def ddl(self, statements: list[str]) -> None:
        for cql in statements:
            await with_retries(lambda cql=cql: asyncio.to_thread(  # type: ignore[misc]
                self.session.execute, cql, timeout=ATTEMPT_S))

    async def prepare(self, statements: dict[str, str]) -> None:
        for name, cql in statements.items():
            self.prepared[name] = await asyncio.to_thread(self.session.prepare, cql)

    def _wrap(self, response: Any) -> asyncio.Future:
        loop = self.loop
        assert loop is not None
        fut = loop.create_future()
        done = self._done

        def ok(result: Any) -> None:
            done.append((fut, result, None))
            self._wake()

        def err(exc: BaseException) -> None:
            done.append((fut, None, exc))
            self._wake()

        response.add_callbacks(ok, err)
        return fut

    def _wake(self) -> None:
        """One loop wake-up per batch of completions, not one per op (a syscall each)."""
        if not self._wake_pending:
            self._wake_pending = True
            assert self.loop is not None
            self.loop.call_soon_threadsafe(self._drain)

    def _drain(self) -> None:
        self._wake_pending = False
        done = self._done
        while done:
            fut, result, exc = done.popleft()
            _settle(fut, result, exc)

    def execute(self, name: str, params: tuple) -> asyncio.Future:
        return self._wrap(self.session.execute_async(self.prepared[name], params))

    def batch(self, name: str, rows: list[tuple]) -> asyncio.Future:
        from cassandra.query import BatchStatement, BatchType

        batch = BatchStatement(batch_type=BatchType.UNLOGGED, consistency_level=self.consistency)
        prepared = self.prepared[name]
        for row in rows:
            batch.add(prepared, row)
        return self._wrap(self.session.execute_async(batch))

    async def scalar(self, cql: str) -> Any:
        rows = await asyncio.to_thread(self.session.execute, cql, timeout=60)
        row = rows.one()
        return None if row is None else row[0]

    async def close(self) -> None:
        if self.cluster is not None:
            await asyncio.to_thread(self.cluster.shutdown)
            self.cluster = None


def _settle(fut: asyncio.Future, result: Any, exc: BaseException | None) -> None:
    if fut.done():
        return
    if exc is not None:
        fut.set_exception(exc)
    else:
        fut.set_result(result)


def make_session(driver: str) -> Any:
    """``acsylla`` / ``cassandra-driver`` / ``auto`` (acsylla when installed)."""
    if driver in ("auto", "acsylla"):
        try:
            import acsylla  # noqa: F401

            return AcsyllaSession()
        except ImportError:
            if driver == "acsylla":
                raise
    return DriverSession()
