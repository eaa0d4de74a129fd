"""What the orchestrator asks a MongoDB host itself (the ``mongodb`` entry of
``engines.py``), through pymongo over an SSH local forward to the host (``db_query.reach``):

- ``before_target``: the pre-flight login of every host of the target (wrong credentials
  or an unreachable server fail the run with one line naming the host and the user),
  and a ``warning`` event for each host that is FerretDB: its timings are FerretDB's;
- ``version``: ``buildInfo``'s version (and ``ferretdbVersion`` for FerretDB);
- ``after_load``: the collection's document count after a load phase;
- ``node_stats``: ``serverStatus`` figures (connections, opcounter deltas and ops/s,
  resident memory) for the store's ``node_stats`` table, beside the node samples.

Every wait has a timeout. pymongo's client is synchronous: every call that may touch
the network (including ``close``) runs in a thread, since the SSH forward it goes
through is served by the orchestrator's own loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

from loadtower.agents.tls import TlsOptions, wrap
from loadtower.engines.mongodb.agent.tls import client_kwargs
from loadtower.errors import LoadtowerError
from loadtower.orchestrator.db_query import QUERY_TIMEOUT_S, reach
from loadtower.orchestrator.secrets import engine_password
from loadtower.orchestrator.tls_files import tls_options
from loadtower.scenarios.crossref import target_hosts
from loadtower.scenarios.plan import Plan
from loadtower.scenarios.workloads.target_spec import loaded_table

AUTH_FAILED = 18
OPCOUNTERS = ("insert", "query", "update", "delete", "getmore", "command")
# FerretDB's serverStatus has no opcounters: its per-command totals stand in for them
FERRET_COMMANDS = {"insert": "insert", "query": "find", "update": "update", "delete": "delete",
                   "getmore": "getMore"}


def _client(point: str, port: int, username: str | None, password: str | None, secure: bool,
            timeout: float, tls: TlsOptions | None = None, node: tuple[str, str, int] | None = None
            ) -> Any:
    """A pymongo client on ``point:port``. With ``tls`` (the inventory's TLS keys), one
    handshake first that checks the certificate against the node's own address (``node``:
    host name, address, port; ``point`` may be an SSH forward's local end): a wrong CA is
    ``TlsHandshakeError``, one line naming the host and the CA file."""
    import socket

    import pymongo

    auth: dict[str, Any] = {}
    if username:
        auth = {"username": username, "password": password or "", "authSource": "admin"}
    ms = int(timeout * 1000)
    name, address, db_port = node or ("", point, port)
    if tls is not None:
        sock = socket.create_connection((point, port), timeout=timeout)
        sock.settimeout(timeout)
        wrap(sock, tls, address, name, f"{address}:{db_port}").close()
    # through a forward pymongo sees 127.0.0.1: the handshake above checked the name
    with client_kwargs(tls, secure, allow_invalid_hostnames=point != address) as tls_kwargs:
        return pymongo.MongoClient(
            point, port, serverSelectionTimeoutMS=ms, connectTimeoutMS=ms,
            socketTimeoutMS=ms, appname="loadtower-orchestrator", **tls_kwargs, **auth,
        )


@contextlib.asynccontextmanager
async def connected(actions: Any, plan: Plan, host: str, timeout: float = QUERY_TIMEOUT_S
                    ) -> AsyncIterator[Any]:
    """A pymongo client logged in to MongoDB host ``host`` (over a forward when SSH)."""
    inventory = plan.inventory
    creds = inventory.credentials("mongodb")
    password = engine_password(plan, "mongodb")
    tls = tls_options(plan, "mongodb")
    address, port = inventory.hosts[host].address, inventory.db_port(host, "mongodb")
    async with reach(actions, host, address, port) as (point, local_port):
        client = await asyncio.wait_for(asyncio.to_thread(
            _client, point, local_port, creds.username, password, creds.secure, timeout, tls,
            (host, address, port)), timeout * 2)
        try:
            yield client
        finally:
            # close() talks to the server (endSessions): never on the loop, which also
            # carries the SSH forward that talk goes through
            await asyncio.shield(asyncio.to_thread(client.close))


async def _call(fn: Callable[[], Any], timeout: float) -> Any:
    return await asyncio.wait_for(asyncio.to_thread(fn), timeout * 2)


async def version(actions: Any, plan: Plan, host: str, timeout: float) -> dict[str, Any]:
    async with connected(actions, plan, host, timeout) as client:
        info = await _call(lambda: client.admin.command("buildInfo"), timeout)
    found = {"version": str(info.get("version"))}
    if info.get("ferretdbVersion"):
        found["ferretdb_version"] = str(info["ferretdbVersion"])
    return found


def _ferret_backend(client: Any) -> str:
    """SQLite or PostgreSQL, from a query plan's form (FerretDB names no backend)."""
    for name in client.list_database_names()[:5]:
        for coll in client[name].list_collection_names()[:1]:
            plan = client[name].command("explain", {"find": coll, "filter": {}})
            text = str(plan.get("queryPlanner", {}).get("Plan", ""))
            if "detail=" in text:
                return "SQLite"
            if "Scan" in text:
                return "PostgreSQL"
    return "backend unknown"


def _login(client: Any) -> dict[str, Any]:
    client.admin.command("ping")
    info = client.admin.command("buildInfo")
    if info.get("ferretdbVersion"):
        try:
            info["ferretdb_backend"] = _ferret_backend(client)
        except Exception:  # noqa: BLE001 - a user that may not list databases: say so
            info["ferretdb_backend"] = "backend unknown"
    return dict(info)


async def before_target(ctx: Any, timeout: float = QUERY_TIMEOUT_S) -> list[str]:
    """Logs in to every MongoDB host of the (single-target) plan; a ``warning`` event for
    each FerretDB. Returns the FerretDB hosts. Raises LoadtowerError (one line) for wrong
    credentials or a server that does not answer."""
    from pymongo.errors import OperationFailure, PyMongoError

    plan = ctx.plan
    inventory = plan.inventory
    user = inventory.credentials("mongodb").username
    flagged = []
    for host in target_hosts(plan.scenario, inventory):
        address, port = inventory.hosts[host].address, inventory.db_port(host, "mongodb")
        try:
            async with connected(ctx.actions, plan, host, timeout) as client:
                info = await _call(functools.partial(_login, client), timeout)
        except OperationFailure as exc:
            if exc.code == AUTH_FAILED:
                raise LoadtowerError(
                    f"MongoDB on host {host} ({address}:{port}) refused user '{user}': "
                    f"authentication failed (check [mongodb] username and password in "
                    f"{plan.inventory_path})"
                ) from None
            raise LoadtowerError(
                f"MongoDB on host {host} ({address}:{port}), user '{user}': {_first(exc)}"
            ) from None
        except (PyMongoError, OSError, TimeoutError) as exc:
            raise LoadtowerError(
                f"MongoDB on host {host} ({address}:{port}) does not answer: {_first(exc)}"
            ) from None
        if info.get("ferretdbVersion"):
            flagged.append(host)
            what = f"FerretDB {info['ferretdbVersion']} ({info['ferretdb_backend']})"
            ctx.event(
                "warning",
                f"MongoDB target {host} is {what}: its timings are FerretDB's, not MongoDB's",
                host=host,
                data={"ferretdb_version": info["ferretdbVersion"],
                      "backend": info["ferretdb_backend"], "mongodb_version": info.get("version")},
            )
    return flagged


def _first(exc: BaseException) -> str:
    return ((str(exc) or type(exc).__name__).splitlines() or [""])[0][:300]


async def after_load(ctx: Any, index: int, timeout: float = QUERY_TIMEOUT_S) -> dict[str, Any]:
    """``{"documents": N}``: the load's collection's document count on the target's first
    host (one count of the whole collection, whichever keys were loaded; a workload
    file's: its load op's collection)."""
    sc = ctx.plan.scenario
    table = loaded_table(ctx.plan, index)
    hosts = target_hosts(sc, ctx.plan.inventory)
    async with connected(ctx.actions, ctx.plan, hosts[0], timeout) as client:
        count = await _call(
            lambda: client[sc.target.keyspace][table].count_documents({}), timeout
        )
    return {"documents": int(count), "collection": f"{sc.target.keyspace}.{table}"}


def stats_of(status: dict[str, Any], before: dict[str, int] | None) -> tuple[dict[str, Any],
                                                                             dict[str, int]]:
    """The figures of one ``serverStatus`` reply, with opcounter deltas since ``before``
    (None: the first reading, no deltas); and the counters to pass next time."""
    counters: dict[str, int] = {}
    if isinstance(status.get("opcounters"), dict):
        counters = {k: int(status["opcounters"].get(k, 0)) for k in OPCOUNTERS}
    else:
        commands = (status.get("metrics") or {}).get("commands") or {}
        counters = {k: int((commands.get(c) or {}).get("total", 0))
                    for k, c in FERRET_COMMANDS.items()}
    figures: dict[str, Any] = {
        "connections_current": (status.get("connections") or {}).get("current"),
        "mem_resident_mb": (status.get("mem") or {}).get("resident"),
        "uptime_s": status.get("uptime"),
    }
    if before is not None:
        figures["opcounters_delta"] = {k: counters[k] - before.get(k, 0) for k in counters}
    return figures, counters


async def node_stats(actions: Any, plan: Plan, host: str, emit: Callable[[str, dict], None],
                     interval: float, timeout: float = QUERY_TIMEOUT_S) -> None:
    """Every ``interval`` s one ``serverStatus`` of ``host``, emitted as (message, data)
    until cancelled: ``data`` is ``stats_of``'s figures with ``ts`` and ``ops_per_s`` (the
    opcounter deltas over the time between the two readings). A reading that fails is
    skipped (the next one tries again)."""
    before: dict[str, int] | None = None
    read_at = 0.0  # when `before` was read (monotonic)
    async with connected(actions, plan, host, timeout) as client:
        while True:
            started = time.monotonic()
            try:
                status = await _call(lambda: client.admin.command("serverStatus"), timeout)
            except Exception:  # noqa: BLE001 - a down node has no stats; the next tick retries
                before = None
            else:
                now = time.monotonic()
                figures, before_next = stats_of(status, before)
                if before is not None:
                    ops = sum(figures["opcounters_delta"].values())
                    figures["ops_per_s"] = round(ops / max(now - read_at, 1e-3), 1)
                    emit(f"{host} serverStatus: {ops} ops, connections "
                         f"{figures['connections_current']}", {"ts": time.time(), **figures})
                before, read_at = before_next, now
            await asyncio.sleep(max(0.05, interval - (time.monotonic() - started)))
