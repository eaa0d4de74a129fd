"""The load ops on ClickHouse: the CQL ops (same keys, rows and mixes) with two changes.

- The load phase inserts a block of rows per op (one ``client.insert``): ClickHouse
  makes a part per insert, and one-row inserts of a whole data set would bury the
  server in parts. The block size is the workload's ``batch_size``.
- With ``update_mode="mutation"`` the recipes and ttl ``update`` is an
  ``ALTER TABLE ... UPDATE`` of the row's non-key columns (``statements()`` builds it)
  instead of an upsert by insert. ycsb's ``update{i}`` statements change by themselves.
"""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any

from loadtower.agents.clickhouse.schemas import columns, keys
from loadtower.agents.cql.schemas import CqlOps


class ClickhouseOps(CqlOps):
    def __init__(self, *args: Any, update_mode: str = "insert", **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.update_mode = update_mode
        key_names = {name for name, _ in keys(self.schema)}
        names = [name for name, _ in columns(self.schema, self.fields)]
        self._value_at = [i for i, name in enumerate(names) if name not in key_names]

    def insert_keys(self, first: int, count: int) -> Awaitable[Any]:
        """One insert of the rows of keys first .. first+count-1 (a load block)."""
        return self.s.batch("insert", [self.row(k) for k in range(first, first + count)])

    def _mutate(self, k: int) -> Awaitable[Any]:
        row = self.row(k)
        values = tuple(row[i] for i in self._value_at)
        return self.s.execute("update", (*values, *self.where(k)))

    def update(self) -> Awaitable[Any]:
        if self.schema != "ycsb" and self.update_mode == "mutation":
            return self._mutate(self.choose())
        return super().update()

    async def read_modify_write(self) -> None:
        if self.schema == "ycsb" or self.update_mode != "mutation":
            await super().read_modify_write()
            return
        k = self.choose()
        await self.s.execute("read", self.where(k))
        await self._mutate(k)
