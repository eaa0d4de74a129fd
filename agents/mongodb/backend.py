"""The load agent's MongoDB backend (see ``agents/backends.py``): pymongo's asyncio
client (``session.py``), a collection per table in the database named by the target's
``keyspace``, the YCSB ops of ``ops.py``, errors under the stable classes of
``errors.py``. Only the ycsb schema has a MongoDB form."""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING, Any

from loadtower.agents.backends import PREPARE_TIMEOUT_S
from loadtower.agents.cql.tls import TlsOptions
from loadtower.agents.mongodb.errors import MongoAuthFailed, MongoDuplicateKey
from loadtower.agents.mongodb.ops import MongoOps
from loadtower.agents.mongodb.session import MongoSession
from loadtower.protocol.phase_spec import TargetSpec

if TYPE_CHECKING:
    from loadtower.agents.engine import PhaseConfig
    from loadtower.agents.mongodb.ycsb_ops import YcsbOps

SCHEMAS = ("ycsb",)


class MongoBackend:
    """MongoDB (and servers of its protocol, e.g. FerretDB) through pymongo."""

    engine = "mongodb"
    default_port = 27017

    @staticmethod
    def _target(cfg: PhaseConfig) -> TargetSpec:
        return cfg.spec["target"]

    def session_key(self, cfg: PhaseConfig) -> tuple:
        target = self._target(cfg)
        return (
            "mongodb",
            tuple(cfg.contact_points),
            cfg.port,
            cfg.username,
            target["keyspace"],
            str(target.get("write_concern")),
            str(target.get("read_preference")),
            bool((cfg.spec.get("connection") or {}).get("secure")),
            tls.key() if (tls := TlsOptions.from_spec(
                (cfg.spec.get("connection") or {}).get("tls"))) else None,
        )

    async def open(self, cfg: PhaseConfig) -> Any:
        target = self._target(cfg)
        connection = cfg.spec.get("connection") or {}
        session = MongoSession()
        try:
            await session.connect(
                cfg.contact_points,
                cfg.port or self.default_port,
                cfg.username,
                cfg.password,
                target["keyspace"],
                secure=bool(connection.get("secure")),
                tls=TlsOptions.from_spec(connection.get("tls")),
                names=connection.get("names"),
                pool_size=cfg.max_in_flight,
                write_concern=target.get("write_concern"),
                read_preference=target.get("read_preference"),
            )
        except BaseException:
            await session.close()
            raise
        return session

    def default_table(self, schema: str) -> str:
        if schema not in SCHEMAS:
            raise ValueError(f"the mongodb engine has no '{schema}' schema (only ycsb)")
        return "usertable"

    def ddl(self, cfg: PhaseConfig, schema: str, table: str) -> list[str]:
        return [f"create {table}"]

    def statements(self, cfg: PhaseConfig, schema: str, table: str) -> dict[str, str]:
        return {}  # ops are driver calls, nothing to prepare

    async def prepare(
        self, session: Any, cfg: PhaseConfig, table: str, stmts: dict[str, str]
    ) -> None:
        """Wait until worker 0 created the collection, then bind the ops to it."""
        deadline = time.monotonic() + PREPARE_TIMEOUT_S
        while not await session.exists(table):
            if time.monotonic() > deadline:
                raise RuntimeError(f"collection {table} did not appear within 60 s")
            await asyncio.sleep(0.5)
        await session.bind(table)

    def ops(self, cfg: PhaseConfig, schema: str, session: Any, **common: Any) -> YcsbOps:
        if schema not in SCHEMAS:
            raise ValueError(f"the mongodb engine has no '{schema}' schema (only ycsb)")
        return MongoOps(schema, session, **common)

    def load_rows(self, cfg: PhaseConfig) -> int:
        return max(1, int(cfg.spec["workload"].get("batch_size", 100)))

    def advice(self, exc: BaseException) -> str | None:
        if isinstance(exc, MongoAuthFailed):
            return str(exc)
        if isinstance(exc, MongoDuplicateKey):
            return (
                "MongoDB refused documents whose _id exists (duplicate key): the load "
                "inserts keys that are already there (drop the collection or load other "
                "keys with start_key)"
            )
        return None
