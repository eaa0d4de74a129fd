"""The load agent's CQL backend: Cassandra and ScyllaDB (see ``agents/backends.py``)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from loadtower.agents.backends import prepare_retrying
from loadtower.agents.cql.schemas import CqlOps
from loadtower.agents.cql.schemas import ddl as cql_ddl
from loadtower.agents.cql.schemas import default_table as cql_default_table
from loadtower.agents.cql.schemas import statements as cql_statements
from loadtower.agents.cql.tls import TlsOptions, probe

if TYPE_CHECKING:
    from loadtower.agents.engine import PhaseConfig
    from loadtower.agents.workload.file_ops import FileRunner
    from loadtower.protocol.workload_file_spec import WorkloadFileSpec


def tls_of(cfg: PhaseConfig) -> TlsOptions | None:
    return TlsOptions.from_spec((cfg.spec.get("connection") or {}).get("tls"))


class CqlBackend:
    """Cassandra and ScyllaDB through acsylla or the DataStax cassandra-driver."""

    engine = "cassandra"
    default_port = 9042

    def session_key(self, cfg: PhaseConfig) -> tuple:
        tls = tls_of(cfg)
        return ("cql", tuple(cfg.contact_points), cfg.port, cfg.username, cfg.driver,
                tls.key() if tls else None, cfg.spec["target"].get("local_dc"))

    async def open(self, cfg: PhaseConfig) -> Any:
        from loadtower.agents.cql.driver_session import make_session

        port = cfg.port or self.default_port
        tls = tls_of(cfg)
        if tls is not None:  # a wrong CA: one line naming the node, whatever the driver
            names = (cfg.spec.get("connection") or {}).get("names")
            await asyncio.to_thread(probe, cfg.contact_points, port, tls, names)
        session = make_session(cfg.driver)
        await session.connect(
            cfg.contact_points,
            port,
            cfg.username,
            cfg.password,
            cfg.spec["target"]["consistency"],
            tls=tls,
            local_dc=cfg.spec["target"].get("local_dc"),
        )
        return session

    def default_table(self, schema: str) -> str:
        return cql_default_table(schema)

    def ddl(self, cfg: PhaseConfig, schema: str, table: str) -> list[str]:
        spec = cfg.spec
        return cql_ddl(
            schema,
            spec["target"]["keyspace"],
            table,
            spec["target"].get("replication") or int(spec["target"]["replication_factor"]),
            int(spec["dataset"]["fields"]),
            spec["workload"].get("ttl"),
        )

    def statements(self, cfg: PhaseConfig, schema: str, table: str) -> dict[str, str]:
        keyspace, fields = cfg.spec["target"]["keyspace"], int(cfg.spec["dataset"]["fields"])
        return cql_statements(schema, keyspace, table, fields)

    async def prepare(
        self, session: Any, cfg: PhaseConfig, table: str, stmts: dict[str, str]
    ) -> None:
        """Prepare; another worker may still be creating the table, so retry a while."""
        await prepare_retrying(lambda: session.prepare(stmts))

    def ops(self, cfg: PhaseConfig, schema: str, session: Any, **common: Any) -> CqlOps:
        return CqlOps(schema, session, **common)

    def load_rows(self, cfg: PhaseConfig) -> int:
        return 1

    def file_runner(self, session: Any, spec: WorkloadFileSpec) -> FileRunner:
        """A workload file's statements (``agents/workload/file_ops.py``)."""
        from loadtower.agents.cql.file_runner import CqlFileRunner

        return CqlFileRunner(session)

    def advice(self, exc: BaseException) -> str | None:
        return None
