"""The load agent's MongoDB backend (see ``agents/backends.py``): pymongo's asyncio
client (``session.py``), a collection per table in the database named by the target's
``keyspace``, every workload as its file's ``mongodb`` calls (``file_runner.py``; the
built-in ycsb is its shipped file), errors under the stable classes of ``errors.py``. Of
the built-in schemas only ycsb has a MongoDB form."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from loadtower.agents.tls import TlsOptions
from loadtower.engines.mongodb.agent.errors import MongoAuthFailed, MongoDuplicateKey
from loadtower.engines.mongodb.agent.session import MongoSession
from loadtower.engines.mongodb.agent.target_spec import MongodbTargetSpec, mongodb_target

if TYPE_CHECKING:
    from loadtower.agents.driver_loop import PhaseConfig
    from loadtower.agents.workload.file_ops import FileRunner
    from loadtower.protocol.workload_file_spec import WorkloadFileSpec


class MongoBackend:
    """MongoDB (and servers of its protocol, e.g. FerretDB) through pymongo."""

    engine = "mongodb"
    default_port = 27017

    @staticmethod
    def _target(cfg: PhaseConfig) -> MongodbTargetSpec:
        return mongodb_target(cfg)

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

    def file_runner(self, session: Any, spec: WorkloadFileSpec) -> FileRunner:
        """A workload file's calls on the spec's collections (``file_runner.py``)."""
        # deferred: the file runner loads numpy (agents/workload); only a workload file needs it
        from loadtower.engines.mongodb.agent.file_runner import MongoFileRunner

        return MongoFileRunner(session, list(spec["tables"]))

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
