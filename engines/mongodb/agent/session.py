"""The MongoDB path: pymongo's asyncio client (``pymongo.AsyncMongoClient``).

One client per agent process and target (its own connection pool of up to
``max_in_flight`` connections per server), awaited on the agent's loop: no thread per
op. The database is the target's ``keyspace``, the collection its table. The target's
``write_concern`` (``"majority"`` or a number of members) and ``read_preference``
(``primary``, ``primaryPreferred``, ``secondary``, ``secondaryPreferred``, ``nearest``)
are set on the collection. Every failure leaves as one of the stable classes of
``errors.py``.

Contact points are ``host`` or ``host:port``; ``port`` is the port of those without one.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from loadtower.agents.stable_errors import guarded_by
from loadtower.agents.tls import TlsOptions, probe
from loadtower.engines.mongodb.agent.errors import MongoAuthFailed, classify
from loadtower.engines.mongodb.agent.tls import client_kwargs

T = TypeVar("T")
NAMESPACE_EXISTS = 48
SERVER_SELECTION_TIMEOUT_MS = 5_000  # a server that is down: ops fail after this
CONNECT_TIMEOUT_MS = 5_000
SOCKET_TIMEOUT_MS = 30_000  # one reply (a long scan or bulk write included)
READ_PREFERENCES = {
    "primary": "PRIMARY",
    "primaryPreferred": "PRIMARY_PREFERRED",
    "secondary": "SECONDARY",
    "secondaryPreferred": "SECONDARY_PREFERRED",
    "nearest": "NEAREST",
}


def split_host(contact_point: str, port: int) -> str:
    """``host`` or ``host:port`` (``[v6]:port`` too) -> ``host:port`` for pymongo."""
    host, sep, tail = contact_point.rpartition(":")
    if sep and tail.isdigit() and (host.endswith("]") or ":" not in host):
        return contact_point
    if ":" in contact_point and not contact_point.startswith("["):
        return f"[{contact_point}]:{port}"
    return f"{contact_point}:{port}"


async def guarded(call: Awaitable[T]) -> T:
    """Awaits a pymongo call; its failure leaves under a stable class."""
    return await guarded_by(call, classify)


class MongoSession:
    name = "pymongo-async"

    def __init__(self) -> None:
        self.client: Any = None
        self.db: Any = None
        self.coll: Any = None
        self.write_concern: str | int | None = None
        self.read_preference: str | None = None

    async def connect(
        self,
        contact_points: list[str],
        port: int,
        username: str | None,
        password: str | None,
        database: str,
        *,
        secure: bool = False,
        tls: TlsOptions | None = None,
        names: dict[str, str] | None = None,
        pool_size: int = 100,
        write_concern: str | int | None = None,
        read_preference: str | None = None,
    ) -> None:
        """Connects and checks the credentials with one ``ping`` (bounded by the server
        selection timeout); wrong credentials raise ``MongoAuthFailed`` naming the user.
        With ``tls`` (the spec's PEM contents) one handshake with each host first: a wrong
        CA raises ``TlsHandshakeError``, one line naming the host (``names``: address ->
        inventory name) and the CA file."""
        from pymongo import AsyncMongoClient

        hosts = [split_host(p, port) for p in contact_points] or [f"127.0.0.1:{port}"]
        auth: dict[str, Any] = {}
        if username:
            auth = {"username": username, "password": password or "", "authSource": "admin"}
        if tls is not None:
            await asyncio.to_thread(probe, hosts, port, tls, names, CONNECT_TIMEOUT_MS / 1000)
        with client_kwargs(tls, secure) as tls_kwargs:
            self.client = AsyncMongoClient(
                hosts,
                maxPoolSize=max(1, pool_size),
                serverSelectionTimeoutMS=SERVER_SELECTION_TIMEOUT_MS,
                connectTimeoutMS=CONNECT_TIMEOUT_MS,
                socketTimeoutMS=SOCKET_TIMEOUT_MS,
                appname="loadtower",
                **tls_kwargs,
                **auth,
            )
        self.write_concern, self.read_preference = write_concern, read_preference
        self.db = self.client.get_database(database)
        try:
            await guarded(self.client.admin.command("ping"))
        except MongoAuthFailed as exc:
            raise MongoAuthFailed(
                f"MongoDB at {', '.join(hosts)} refused user '{username}': authentication "
                "failed (check [mongodb].username and its password)"
            ) from exc

    def collection(self, name: str) -> Any:
        from pymongo import ReadPreference, WriteConcern

        options: dict[str, Any] = {}
        if self.write_concern is not None:
            options["write_concern"] = WriteConcern(w=self.write_concern)
        if self.read_preference is not None:
            options["read_preference"] = getattr(
                ReadPreference, READ_PREFERENCES[self.read_preference]
            )
        return self.db.get_collection(name, **options)

    # -- the engine's session interface (agents/backends.py) -----------------------------
    async def ddl(self, statements: list[str]) -> None:
        """``create COLLECTION``: the collection, unless it exists (ids are indexed);
        ``index COLLECTION {"a": 1, "b": -1}``: that index (``create_index``: none
        made when it exists)."""
        from pymongo.errors import CollectionInvalid, OperationFailure

        existing = set(await guarded(self.db.list_collection_names()))
        for statement in statements:
            verb, _, name = statement.partition(" ")
            if verb == "index":
                name, _, keys = name.partition(" ")
                await guarded(self.db[name].create_index(list(json.loads(keys).items())))
                continue
            if verb != "create":
                raise ValueError(f"unknown MongoDB schema statement '{statement}'")
            if name not in existing:
                try:
                    await guarded(self.db.create_collection(name))
                except CollectionInvalid:  # another process created it meanwhile
                    pass
                except OperationFailure as exc:
                    if exc.code != NAMESPACE_EXISTS:
                        raise

    async def bind(self, table: str) -> None:
        self.coll = self.collection(table)

    async def exists(self, table: str) -> bool:
        return table in set(await guarded(self.db.list_collection_names()))

    def run(self, call: Callable[[Any], Awaitable[T]]) -> Awaitable[T]:
        """One op on the bound collection, its failure under a stable class."""
        return guarded(call(self.coll))

    async def count(self, table: str) -> int:
        return int(await guarded(self.db.get_collection(table).count_documents({})))

    async def scalar(self, command: str) -> Any:
        """The reply of one admin command by name (``buildInfo``, ``serverStatus``)."""
        return await guarded(self.client.admin.command(command))

    async def close(self) -> None:
        client, self.client = self.client, None
        if client is not None:
            await client.close()
