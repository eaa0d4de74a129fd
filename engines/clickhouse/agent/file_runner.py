"""Workload-file statements on ClickHouse (``agents/workload/file_ops.py``): an insert
head gets the op's rows in one ``client.insert`` (the columns' types read once at
prepare), any other statement one query with server-side ``{name:Type}`` parameters."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from loadtower.agents.backends import PREPARE_TIMEOUT_S
from loadtower.agents.workload.file_ops import Row, named, positional
from loadtower.protocol.workload_file_spec import StatementSpec


class ClickhouseFileRunner:
    def __init__(self, session: Any, tables: list[str]) -> None:
        self.session, self.tables = session, tables

    async def prepare(self, statements: dict[str, StatementSpec]) -> None:
        """Wait until worker 0 created the tables, then prepare (inserts: column types)."""
        deadline = time.monotonic() + PREPARE_TIMEOUT_S
        for table in self.tables:
            while not int(await self.session.scalar(f"EXISTS TABLE {table}") or 0):
                if time.monotonic() > deadline:
                    raise RuntimeError(f"table {table} did not appear within 60 s")
                await asyncio.sleep(0.5)
        await self.session.prepare({name: s["text"] for name, s in statements.items()})

    def send(self, name: str, statement: StatementSpec, rows: list[Row]) -> Any:
        if statement["insert_rows"]:
            return self.session.batch(name, [positional(statement, row) for row in rows])
        return self.session.execute_named(name, named(statement, rows))

    def found(self, result: Any) -> bool:
        return bool(result)
