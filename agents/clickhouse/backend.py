"""The load agent's ClickHouse backend (see ``agents/backends.py``): clickhouse-connect
over HTTP, the tables of ``schemas.py`` shaped by the scenario's target keys, the ops of
``ops.py``, and ``max_concurrent_queries`` advice when the server refuses queries."""

from __future__ import annotations

import asyncio
import json
import time
from typing import TYPE_CHECKING, Any

from loadtower.agents.backends import PREPARE_TIMEOUT_S
from loadtower.agents.clickhouse.ops import ClickhouseOps
from loadtower.agents.clickhouse.schemas import ddl, default_table, statements
from loadtower.agents.clickhouse.session import ClickhouseOverloaded, ClickhouseSession
from loadtower.protocol.phase_spec import TargetSpec

if TYPE_CHECKING:
    from loadtower.agents.cql.schemas import CqlOps
    from loadtower.agents.engine import PhaseConfig
    from loadtower.agents.workload.file_ops import FileRunner
    from loadtower.protocol.workload_file_spec import WorkloadFileSpec


class ClickhouseBackend:
    """ClickHouse over HTTP through clickhouse-connect (``agents/clickhouse``)."""

    engine = "clickhouse"
    default_port = 8123

    @staticmethod
    def _target(cfg: PhaseConfig) -> TargetSpec:
        return cfg.spec["target"]

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

    def default_table(self, schema: str) -> str:
        return default_table(schema)

    def ddl(self, cfg: PhaseConfig, schema: str, table: str) -> list[str]:
        target = self._target(cfg)
        return ddl(
            schema,
            target["keyspace"],
            table,
            int(cfg.spec["dataset"]["fields"]),
            cfg.spec["workload"].get("ttl"),
            table_engine=target.get("table_engine"),
            order_by=target.get("order_by"),
            skip_indexes=target.get("skip_indexes"),
        )

    def statements(self, cfg: PhaseConfig, schema: str, table: str) -> dict[str, str]:
        target = self._target(cfg)
        return statements(
            schema,
            target["keyspace"],
            table,
            int(cfg.spec["dataset"]["fields"]),
            delete_mode=self._settings(cfg)["delete_mode"],
            update_mode=target.get("update_mode") or "insert",
            final=target.get("table_engine") != "MergeTree",
        )

    async def prepare(
        self, session: Any, cfg: PhaseConfig, table: str, stmts: dict[str, str]
    ) -> None:
        """Wait until worker 0 created the table, then prepare (reads the column types)."""
        qualified = f"{self._target(cfg)['keyspace']}.{table}"
        deadline = time.monotonic() + PREPARE_TIMEOUT_S
        while not int(await session.scalar(f"EXISTS TABLE {qualified}") or 0):
            if time.monotonic() > deadline:
                raise RuntimeError(f"table {qualified} did not appear within 60 s")
            await asyncio.sleep(0.5)
        await session.prepare(stmts)

    def ops(self, cfg: PhaseConfig, schema: str, session: Any, **common: Any) -> CqlOps:
        update_mode = self._target(cfg).get("update_mode") or "insert"
        return ClickhouseOps(schema, session, update_mode=update_mode, **common)

    def load_rows(self, cfg: PhaseConfig) -> int:
        return max(1, int(cfg.spec["workload"].get("batch_size", 100)))

    def file_runner(self, session: Any, spec: WorkloadFileSpec) -> FileRunner:
        """A workload file's statements (``agents/workload/file_ops.py``)."""
        from loadtower.agents.clickhouse.file_runner import ClickhouseFileRunner

        return ClickhouseFileRunner(session, spec["tables"])

    def advice(self, exc: BaseException) -> str | None:
        return str(exc) if isinstance(exc, ClickhouseOverloaded) else None
