"""The load agent's ClickHouse backend (see ``agents/backends.py``): clickhouse-connect
over HTTP, a workload file's statements through ``file_runner.py`` (the load's blocks
of ``batch_size`` rows per insert: ``load_rows``), and ``max_concurrent_queries``
advice when the server refuses queries."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from loadtower.engines.clickhouse.agent.session import ClickhouseOverloaded, ClickhouseSession
from loadtower.engines.clickhouse.agent.target_spec import ClickhouseTargetSpec, clickhouse_target

if TYPE_CHECKING:
    from loadtower.agents.driver_loop import PhaseConfig
    from loadtower.agents.workload.file_ops import FileRunner
    from loadtower.protocol.workload_file_spec import WorkloadFileSpec


class ClickhouseBackend:
    """ClickHouse over HTTP through clickhouse-connect (``engines/clickhouse/agent``)."""

    engine = "clickhouse"
    default_port = 8123

    @staticmethod
    def _target(cfg: PhaseConfig) -> ClickhouseTargetSpec:
        return clickhouse_target(cfg)

    def _settings(self, cfg: PhaseConfig) -> dict[str, Any]:
        target = self._target(cfg)
        settings = dict(target.get("settings") or {})
        settings["delete_mode"] = target.get("delete_mode") or settings.get(
            "delete_mode", "lightweight"
        )
        return settings

    def session_key(self, cfg: PhaseConfig) -> tuple:
        target = self._target(cfg)
        return (
            "clickhouse",
            tuple(cfg.contact_points),
            cfg.port,
            cfg.username,
            target["keyspace"],
            json.dumps(self._settings(cfg), sort_keys=True),
            bool((cfg.spec.get("connection") or {}).get("secure")),
        )

    async def open(self, cfg: PhaseConfig) -> Any:
        session = ClickhouseSession(threads=max(4, cfg.max_in_flight))
        try:
            await session.connect(
                cfg.contact_points,
                cfg.port or self.default_port,
                cfg.username,
                cfg.password,
                "",
                settings=self._settings(cfg),
                database=self._target(cfg)["keyspace"],
                secure=bool((cfg.spec.get("connection") or {}).get("secure")),
            )
        except BaseException:
            await session.close()
            raise
        return session

    def load_rows(self, cfg: PhaseConfig) -> int:
        return max(1, int(cfg.spec["workload"].get("batch_size", 100)))

    def file_runner(self, session: Any, spec: WorkloadFileSpec) -> FileRunner:
        """A workload file's statements (``agents/workload/file_ops.py``)."""
        # deferred: the file runner loads numpy (agents/workload); only a workload file needs it
        from loadtower.engines.clickhouse.agent.file_runner import ClickhouseFileRunner

        return ClickhouseFileRunner(session, spec["tables"])

    def advice(self, exc: BaseException) -> str | None:
        return str(exc) if isinstance(exc, ClickhouseOverloaded) else None
