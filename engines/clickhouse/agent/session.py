"""The ClickHouse path: clickhouse-connect's sync HTTP client behind an asyncio face.

Same interface as ``engines/cassandra/agent/driver_session.DriverSession``. The calls run on a
ThreadPoolExecutor (as many threads as ops may be in flight); every call returns an
asyncio future, so the agent's loop never blocks on HTTP. ``connect`` makes ONE client
per contact point, shared by the threads (each thread sticks to one, round robin):
without a session id a clickhouse-connect client serves concurrent queries from many
threads (each query keeps its own context), and creating a client costs round trips
(server version, settings) that must not land in the first ops' latencies. All clients
share one urllib3 pool sized to the threads.

Contact points are ``host`` or ``host:port`` (a per-host HTTP port); ``port`` is the
port of those without one.

Statements come from ``engines/clickhouse/agent/schemas``: ``{p0:Type}...`` bind the op's
parameters in order, ``{keys:Array(...)}`` takes the list of keys of a delete, and an
``insert`` statement is ``INSERT INTO db.t (cols)``, sent with ``client.insert``.
The CQL ``consistency`` is accepted and ignored. ``settings`` are ClickHouse settings
sent with every query, except ``delete_mode`` ("lightweight" or "mutation"), read here.
"""

from __future__ import annotations

import asyncio
import re
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from loadtower.engines.clickhouse.agent.schemas import as_mutation

TOO_MANY_SIMULTANEOUS_QUERIES = 202
_INSERT = re.compile(r"^\s*INSERT\s+INTO\s+(\S+)\s*\(([^)]*)\)\s*$", re.I | re.S)
_READ = re.compile(r"^\s*(SELECT|WITH|SHOW|DESCRIBE|EXISTS)\b", re.I)


class ClickhouseOverloaded(RuntimeError):
    """The server refused a query: too many simultaneous queries (code 202)."""


def _key(row: tuple) -> Any:
    return row[0] if len(row) == 1 else tuple(row)


class ClickhouseSession:
    name = "clickhouse-connect"

    def __init__(self, threads: int = 8) -> None:
        self.threads = threads
        self.loop: asyncio.AbstractEventLoop | None = None
        self.database = "default"
        self.delete_mode = "lightweight"
        self.statements: dict[str, str] = {}
        self.inserts: dict[str, tuple[str, list[str], list[str]]] = {}
        self._executor: ThreadPoolExecutor | None = None
        self._local = threading.local()
        self._clients: list[Any] = []
        self._assigned = 0
        self._lock = threading.Lock()
        self._args: dict[str, Any] = {}
        self._hosts: list[tuple[str, int]] = []
        self._pool: Any = None

    # -- connection ----------------------------------------------------------------------
    async def connect(
        self,
        contact_points: list[str],
        port: int,
        username: str | None,
        password: str | None,
        consistency: str,
        settings: dict | None = None,
        database: str = "default",
        secure: bool = False,
        timeout_s: float = 300.0,
    ) -> None:
        from clickhouse_connect.driver.httputil import get_pool_manager

        del consistency  # no consistency levels over HTTP
        settings = dict(settings or {})
        self.delete_mode = str(settings.pop("delete_mode", "lightweight"))
        self.loop = asyncio.get_running_loop()
        self.database = database
        self._hosts = [split_host(p, port) for p in contact_points] or [("127.0.0.1", port)]
        self._pool = get_pool_manager(maxsize=self.threads, num_pools=len(self._hosts) + 1)
        self._args = dict(
            username=username or "default",
            password=password or "",
            settings=settings,
            pool_mgr=self._pool,
            autogenerate_session_id=False,
            secure=secure,
            connect_timeout=10,
            send_receive_timeout=timeout_s,
        )
        self._executor = ThreadPoolExecutor(self.threads, thread_name_prefix="clickhouse")
        await self._submit(self._bootstrap)

    def _new_client(self, host: tuple[str, int], database: str) -> Any:
        import clickhouse_connect

        return clickhouse_connect.get_client(
            host=host[0], port=host[1], database=database, **self._args
        )

    def _bootstrap(self) -> None:
        """Checks the credentials, creates the database, makes one client per host."""
        client = self._new_client(self._hosts[0], "default")
        try:
            client.command(f"CREATE DATABASE IF NOT EXISTS {self.database}")
        finally:
            client.close()
        clients = [self._new_client(host, self.database) for host in self._hosts]
        with self._lock:
            self._clients = clients

    def _client(self) -> Any:
        client = getattr(self._local, "client", None)
        if client is None:
            with self._lock:
                self._assigned += 1
                client = self._clients[self._assigned % len(self._clients)]
            self._local.client = client
        return client

    def _submit(self, fn: Callable[..., Any], *args: Any) -> asyncio.Future:
        assert self._executor is not None and self.loop is not None, "not connected"
        return asyncio.wrap_future(self._executor.submit(_guard, fn, *args), loop=self.loop)

    # -- statements ----------------------------------------------------------------------
    async def ddl(self, statements: list[str]) -> None:
        for sql in statements:
            await self._submit(lambda s=sql: self._client().command(s))

    async def prepare(self, statements: dict[str, str]) -> None:
        """Keep the statements; an insert's column types are read once here (the table
        must exist), so that each insert op is ONE request (clickhouse-connect would
        otherwise ask the server for the types before every insert)."""
        for name, sql in statements.items():
            if self.delete_mode == "mutation":
                sql = as_mutation(sql)
            self.statements[name] = sql
            m = _INSERT.match(sql)
            if m is not None:
                cols = [c.strip().strip("`") for c in m.group(2).split(",")]
                types = await self._submit(self._column_types, m.group(1))
                missing = [c for c in cols if c not in types]
                if missing:
                    raise ValueError(f"table {m.group(1)} has no column {', '.join(missing)}")
                self.inserts[name] = (m.group(1), cols, [types[c] for c in cols])

    def _column_types(self, table: str) -> dict[str, str]:
        rows = self._client().query(f"DESCRIBE TABLE {table}").result_rows
        return {str(r[0]): str(r[1]) for r in rows}

    def _run(self, name: str, params: tuple) -> Any:
        if name in self.inserts:
            return self._insert(name, [params])
        sql = self.statements[name]
        if "{keys:" in sql:
            return self._command(sql, {"keys": [_key(params)]})
        bound = {f"p{i}": value for i, value in enumerate(params)}
        if _READ.match(sql):
            return self._client().query(sql, parameters=bound).result_rows
        return self._command(sql, bound)

    def _insert(self, name: str, rows: list[tuple]) -> Any:
        table, cols, types = self.inserts[name]
        return self._client().insert(
            table, [list(r) for r in rows], column_names=cols, column_type_names=types
        )

    def _command(self, sql: str, parameters: dict[str, Any]) -> Any:
        return self._client().command(sql, parameters=parameters)

    def _batch(self, name: str, rows: list[tuple]) -> Any:
        if name in self.inserts:
            return self._insert(name, rows)
        sql = self.statements[name]
        if "{keys:" in sql:
            return self._command(sql, {"keys": [_key(r) for r in rows]})
        return [self._run(name, r) for r in rows]

    def _run_named(self, name: str, params: dict[str, Any]) -> Any:
        sql = self.statements[name]
        if _READ.match(sql):
            return self._client().query(sql, parameters=params).result_rows
        return self._command(sql, params)

    def execute_named(self, name: str, params: dict[str, Any]) -> asyncio.Future:
        """A statement with server-side ``{name:Type}`` parameters (workload files); a
        read's rows come back."""
        return self._submit(self._run_named, name, params)

    def execute(self, name: str, params: tuple) -> asyncio.Future:
        return self._submit(self._run, name, params)

    def batch(self, name: str, rows: list[tuple]) -> asyncio.Future:
        """insert: ONE client.insert of all rows; delete: ONE statement for all keys."""
        return self._submit(self._batch, name, rows)

    async def scalar(self, sql: str) -> Any:
        rows = await self._submit(lambda: self._client().query(sql).result_rows)
        return rows[0][0] if rows else None

    async def optimize_final(self, table: str) -> float:
        """``OPTIMIZE TABLE db.t FINAL`` (the compaction action); returns its seconds."""
        qualified = table if "." in table else f"{self.database}.{table}"

        def run() -> float:
            start = time.perf_counter()
            self._client().command(f"OPTIMIZE TABLE {qualified} FINAL")
            return time.perf_counter() - start

        return await self._submit(run)

    async def close(self) -> None:
        executor, self._executor = self._executor, None
        if executor is not None:
            await asyncio.to_thread(executor.shutdown, True)
        with self._lock:
            clients, self._clients = self._clients, []
        for client in clients:
            client.close()
        if self._pool is not None:
            self._pool.clear()
            self._pool = None


def split_host(contact_point: str, port: int) -> tuple[str, int]:
    """``host`` or ``host:port`` (``[v6]:port`` too) -> (host, port)."""
    host, sep, tail = contact_point.rpartition(":")
    if sep and tail.isdigit() and (host.endswith("]") or ":" not in host):
        return host.strip("[]"), int(tail)
    return contact_point.strip("[]"), port


def _guard(fn: Callable[..., Any], *args: Any) -> Any:
    """Runs ``fn``; turns "too many simultaneous queries" into advice."""
    try:
        return fn(*args)
    except Exception as exc:
        code = getattr(exc, "code", None)
        if code == TOO_MANY_SIMULTANEOUS_QUERIES or "TOO_MANY_SIMULTANEOUS_QUERIES" in str(exc):
            raise ClickhouseOverloaded(
                "ClickHouse refused the query: too many simultaneous queries (code 202). "
                "Raise the server's max_concurrent_queries (or the user's "
                "max_concurrent_queries_for_user), or lower the request rate / the "
                f"agent's concurrency. Server said: {exc}"
            ) from exc
        raise
