"""What the orchestrator asks a Redis host itself (the kind's hooks,
``scenarios/engine_hooks.py``), through redis-py's asyncio client over an SSH
local forward to the host (``db_query.reach``):

- ``before_target``: the pre-flight login of every host of the target (wrong credentials
  or a server that does not answer fail the run with one line naming the host and user);
- ``version``: ``INFO server``'s ``redis_version``;
- ``after_load``: the keys on the server (``DBSIZE``) and the loaded table's members
  (its sorted set of keys, where the workload keeps one: ``ZCARD``);
- ``node_stats``: ``INFO`` figures (clients, memory, commands and keyspace hits/misses
  per second, evictions) for the store's ``node_stats`` table, beside the node samples.

Every wait has a timeout: the client's socket timeouts, and one bound around each call.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

from loadtower.errors import LoadtowerError
from loadtower.orchestrator.db_query import QUERY_TIMEOUT_S, reach
from loadtower.orchestrator.secrets import engine_password
from loadtower.scenarios.crossref import target_hosts
from loadtower.scenarios.plan import Plan
from loadtower.scenarios.workloads.target_spec import loaded_table

# INFO counters whose per-second rate is a figure, and gauges kept as they are
COUNTERS = ("total_commands_processed", "keyspace_hits", "keyspace_misses", "evicted_keys",
            "expired_keys", "total_net_input_bytes", "total_net_output_bytes")
GAUGES = ("connected_clients", "blocked_clients", "used_memory", "used_memory_rss",
          "instantaneous_ops_per_sec", "uptime_in_seconds")


@contextlib.asynccontextmanager
async def connected(actions: Any, plan: Plan, host: str, timeout: float = QUERY_TIMEOUT_S
                    ) -> AsyncIterator[Any]:
    """A redis-py asyncio client logged in to Redis host ``host`` (over a forward when
    SSH); the login is checked by the first call."""
    from redis.asyncio import Redis

    inventory = plan.inventory
    creds = inventory.credentials("redis")
    password = engine_password(plan, "redis")
    address, port = inventory.hosts[host].address, inventory.db_port(host, "redis")
    async with reach(actions, host, address, port) as (point, local_port):
        client = Redis(host=point, port=local_port, username=creds.username or None,
                       password=password or None, socket_timeout=timeout,
                       socket_connect_timeout=timeout, client_name="loadtower-orchestrator")
        try:
            yield client
        finally:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(client.aclose(), timeout)


async def _call(awaitable: Any, timeout: float) -> Any:
    return await asyncio.wait_for(awaitable, timeout * 2)


def _first(exc: BaseException) -> str:
    return ((str(exc) or type(exc).__name__).splitlines() or [""])[0][:300]


async def before_target(ctx: Any, timeout: float = QUERY_TIMEOUT_S) -> None:
    """Logs in to every Redis host of the (single-target) plan. Raises LoadtowerError (one
    line) for wrong credentials or a server that does not answer."""
    from redis import exceptions as rex

    plan = ctx.plan
    inventory = plan.inventory
    user = inventory.credentials("redis").username or "default"
    for host in target_hosts(plan.scenario, inventory):
        address, port = inventory.hosts[host].address, inventory.db_port(host, "redis")
        try:
            async with connected(ctx.actions, plan, host, timeout) as client:
                await _call(client.ping(), timeout)
        except (rex.AuthenticationError, rex.AuthorizationError) as exc:
            raise LoadtowerError(
                f"Redis on host {host} ({address}:{port}) refused user '{user}': "
                f"authentication failed (check [redis] username and password in "
                f"{plan.inventory_path}): {_first(exc)}") from None
        except rex.ResponseError as exc:
            if str(exc).startswith(("WRONGPASS", "NOAUTH")):
                raise LoadtowerError(
                    f"Redis on host {host} ({address}:{port}) refused user '{user}': "
                    f"authentication failed (check [redis] username and password in "
                    f"{plan.inventory_path})") from None
            raise LoadtowerError(
                f"Redis on host {host} ({address}:{port}), user '{user}': {_first(exc)}"
            ) from None
        except (rex.RedisError, OSError, TimeoutError) as exc:
            raise LoadtowerError(
                f"Redis on host {host} ({address}:{port}) does not answer: {_first(exc)}"
            ) from None


async def version(actions: Any, plan: Plan, host: str, timeout: float) -> dict[str, Any]:
    async with connected(actions, plan, host, timeout) as client:
        info = await _call(client.info("server"), timeout)
    return {"version": str(info.get("redis_version")), "redis_mode": info.get("redis_mode")}


async def after_load(ctx: Any, index: int, timeout: float = QUERY_TIMEOUT_S) -> dict[str, Any]:
    """``{"keys": N, "index": "KEYSPACE:TABLE", "members": M}`` on the target's first
    host: the server's keys after the load (all of them: Redis has one key space), and the
    members of the table's sorted set of record keys (the ycsb file keeps one under
    KEYSPACE:TABLE; None where there is no such sorted set)."""
    sc = ctx.plan.scenario
    table = loaded_table(ctx.plan, index)
    hosts = target_hosts(sc, ctx.plan.inventory)
    async with connected(ctx.actions, ctx.plan, hosts[0], timeout) as client:
        keys = int(await _call(client.dbsize(), timeout))
        index_key = f"{sc.target.keyspace}:{table}"
        kind = await _call(client.type(index_key), timeout)
        members = int(await _call(client.zcard(index_key), timeout)) \
            if kind in (b"zset", "zset") else None
    return {"keys": keys, "index": index_key, "members": members}


def stats_of(info: dict[str, Any], before: dict[str, int] | None, seconds: float
             ) -> tuple[dict[str, Any], dict[str, int]]:
    """The figures of one ``INFO`` reply: its gauges (memory in MB), and each counter's
    rate per second since ``before`` (None: the first reading, no rates); and the
    counters to pass next time."""
    counters = {k: int(info.get(k, 0) or 0) for k in COUNTERS}
    figures: dict[str, Any] = {k: info.get(k) for k in GAUGES}
    for key in ("used_memory", "used_memory_rss"):
        if isinstance(figures.get(key), int | float):
            figures[f"{key}_mb"] = round(float(figures.pop(key)) / 2**20, 1)
    if before is not None:
        figures["per_s"] = {k: round((counters[k] - before.get(k, 0)) / max(seconds, 1e-3), 1)
                            for k in COUNTERS}
    return figures, counters


async def node_stats(actions: Any, plan: Plan, host: str, emit: Callable[[str, dict], None],
                     interval: float, timeout: float = QUERY_TIMEOUT_S) -> None:
    """Every ``interval`` s one ``INFO`` of ``host``, emitted as (message, data) until
    cancelled (``stats_of``'s figures with ``ts``). A reading that fails is skipped (the
    next one tries again: a killed server has no figures)."""
    before: dict[str, int] | None = None
    read_at = 0.0
    async with connected(actions, plan, host, timeout) as client:
        while True:
            started = time.monotonic()
            try:
                info = await _call(client.info(), timeout)
            except Exception:  # noqa: BLE001 - a down node has no stats; the next tick retries
                before = None
            else:
                now = time.monotonic()
                figures, counters = stats_of(info, before, now - read_at)
                if before is not None:
                    rate = figures["per_s"]["total_commands_processed"]
                    emit(f"{host} INFO: {rate:g} commands/s, clients "
                         f"{figures['connected_clients']}", {"ts": time.time(), **figures})
                before, read_at = counters, now
            await asyncio.sleep(max(0.05, interval - (time.monotonic() - started)))
