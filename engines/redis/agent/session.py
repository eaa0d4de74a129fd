"""The Redis path: redis-py's asyncio client (``redis.asyncio.Redis``).

One client per agent process and target, its connections in a blocking pool of up to
``max_in_flight`` (an op waits for a free connection rather than opening more), awaited
on the agent's loop. Redis is one server here (no cluster): the target's first contact
point, ``host`` or ``host:port``. Every failure leaves as one of the stable classes of
``errors.py``.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any, TypeVar

from loadtower.agents.stable_errors import guarded_by
from loadtower.engines.redis.agent.errors import RedisAuthFailed, classify

T = TypeVar("T")
CONNECT_TIMEOUT_S = 5.0
SOCKET_TIMEOUT_S = 30.0  # one reply (a pipeline of a whole block included)
POOL_WAIT_S = 30.0  # an op waiting for a free connection


def split_host(contact_point: str, port: int) -> tuple[str, int]:
    """``host``, ``host:port`` or ``[v6]:port`` -> (host, port)."""
    host, sep, tail = contact_point.rpartition(":")
    if sep and tail.isdigit() and (host.endswith("]") or ":" not in host):
        return host.strip("[]"), int(tail)
    return contact_point.strip("[]"), port


async def guarded(call: Awaitable[T]) -> T:
    """Awaits a redis-py call; its failure leaves under a stable class."""
    return await guarded_by(call, classify)


class RedisSession:
    name = "redis-py-async"

    def __init__(self) -> None:
        self.client: Any = None
        self.where = ""

    async def connect(self, contact_points: list[str], port: int, username: str | None,
                      password: str | None, *, pool_size: int = 100) -> None:
        """Connects and checks the login with one ``PING``; wrong credentials raise
        ``RedisAuthFailed`` naming the user and the server."""
        from redis.asyncio import BlockingConnectionPool, Redis
        from redis.asyncio.retry import Retry
        from redis.backoff import NoBackoff
        from redis.exceptions import ConnectionError as BrokenConnection

        host, port = split_host((contact_points or ["127.0.0.1"])[0], port)
        self.where = f"{host}:{port}"
        pool = BlockingConnectionPool(
            host=host, port=port, username=username or None, password=password or None,
            max_connections=max(1, pool_size), timeout=POOL_WAIT_S,
            socket_connect_timeout=CONNECT_TIMEOUT_S, socket_timeout=SOCKET_TIMEOUT_S,
            client_name="loadtower",
            # one retry on a broken connection, none on a timeout: a pooled connection a
            # restarted server dropped reconnects once (as pymongo's retryable ops do),
            # while a server that is down or slow fails the op, counted, not hidden
            retry=Retry(NoBackoff(), 1, supported_errors=(BrokenConnection,)))
        self.client = Redis(connection_pool=pool)
        try:
            await guarded(self.client.ping())
        except RedisAuthFailed as exc:
            raise RedisAuthFailed(
                f"Redis at {self.where} refused user '{username or 'default'}': "
                "authentication failed (check [redis].username and its password)") from exc

    # -- the engine's session interface (agents/backends.py) -----------------------------
    async def ddl(self, statements: list[str]) -> None:
        """Redis has no schema: a workload file's tables render no statements."""
        if statements:
            raise ValueError(f"Redis takes no schema statements (got {statements[0]!r})")

    def pipeline(self) -> Any:
        return self.client.pipeline(transaction=False)

    async def command(self, *args: Any) -> Any:
        return await guarded(self.client.execute_command(*args))

    async def close(self) -> None:
        client, self.client = self.client, None
        if client is not None:
            await client.aclose()
            await client.connection_pool.disconnect()
