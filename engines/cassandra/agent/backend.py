"""The load agent's CQL backend: Cassandra and ScyllaDB (see ``agents/backends.py``)."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

from loadtower.agents.tls import TlsOptions, probe
from loadtower.engines.cassandra.agent.driver_session import make_session
from loadtower.engines.cassandra.agent.target_spec import cql_target

if TYPE_CHECKING:
    from loadtower.agents.driver_loop import PhaseConfig
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
                tls.key() if tls else None, cql_target(cfg).get("local_dc"))

    async def open(self, cfg: PhaseConfig) -> Any:
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
            cql_target(cfg)["consistency"],
            tls=tls,
            local_dc=cql_target(cfg).get("local_dc"),
        )
        return session

    def load_rows(self, cfg: PhaseConfig) -> int:
        return 1

    def file_runner(self, session: Any, spec: WorkloadFileSpec) -> FileRunner:
        """A workload file's statements (``agents/workload/file_ops.py``)."""
        # deferred: the file runner loads numpy (agents/workload); only a workload file needs it
        from loadtower.engines.cassandra.agent.file_runner import CqlFileRunner

        return CqlFileRunner(session)

    def advice(self, exc: BaseException) -> str | None:
        return None
