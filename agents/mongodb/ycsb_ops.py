"""The built-in ops' keys, rows and op methods (the engines' code before the built-ins
became workload files), kept for MongoOps alone: the ycsb built-in on MongoDB runs
through them until the mongodb file runner lands; the integrator removes this file,
MongoOps and the engine's mongodb branch after merging it.

Key numbers map to keys deterministically, as the shipped workload files render them."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable
from typing import Any

from loadtower.agents.workload.keys import fnv64
from loadtower.agents.workload.values import ValuePool

RECIPE_PRICES = 997  # distinct total_price partitions


class YcsbOps:
    """The ops of one schema over a session; each op is an awaitable factory."""

    def __init__(
        self,
        schema: str,
        session: Any,
        values: ValuePool,
        fields: int,
        field_size: int,
        choose: Callable[[], int],
        new_key: Callable[[], int],
        batch_size: int,
        scan_length: int,
        rng: Any,
    ) -> None:
        self.schema, self.s, self.values = schema, session, values
        self.fields, self.field_size = fields, field_size
        self.choose, self.new_key = choose, new_key
        self.batch_size, self.scan_length, self.rng = batch_size, scan_length, rng

    # -- keys and rows ------------------------------------------------------------------
    def key(self, k: int) -> Any:
        if self.schema == "ycsb":
            return f"user{fnv64(k)}"
        if self.schema == "recipes":
            return (float(k % RECIPE_PRICES), uuid.UUID(int=fnv64(k) << 64 | k))
        return k

    def row(self, k: int) -> tuple:
        key = self.key(k)
        if self.schema == "ycsb":
            return (key, *(self.values.text(self.field_size) for _ in range(self.fields)))
        if self.schema == "recipes":
            price, rid = key
            return (rid, self.values.text(self.field_size), self.values.text(32), price)
        return (key, self.values.text(self.field_size), self.values.text(self.field_size))

    def where(self, k: int) -> tuple:
        key = self.key(k)
        return key if isinstance(key, tuple) else (key,)

    # -- ops ---------------------------------------------------------------------------
    def insert_key(self, k: int) -> Awaitable[Any]:
        return self.s.execute("insert", self.row(k))

    def read(self) -> Awaitable[Any]:
        return self.s.execute("read", self.where(self.choose()))

    def update(self) -> Awaitable[Any]:
        if self.schema != "ycsb":
            return self.insert_key(self.choose())
        i = self.rng.randrange(self.fields)
        k = self.key(self.choose())
        return self.s.execute(f"update{i}", (self.values.text(self.field_size), k))

    def insert(self) -> Awaitable[Any]:
        return self.insert_key(self.new_key())

    def scan(self) -> Awaitable[Any]:
        length = self.rng.randint(1, self.scan_length)
        return self.s.execute("scan", (self.key(self.choose()), length))

    async def read_modify_write(self) -> None:
        k = self.choose()
        await self.s.execute("read", self.where(k))
        if self.schema == "ycsb":
            i = self.rng.randrange(self.fields)
            await self.s.execute(f"update{i}", (self.values.text(self.field_size), self.key(k)))
        else:
            await self.insert_key(k)

    def insert_batch(self) -> Awaitable[Any]:
        return self.s.batch("insert", [self.row(self.new_key()) for _ in range(self.batch_size)])

    def delete(self) -> Awaitable[Any]:
        return self.s.execute("delete", self.where(self.choose()))

    def delete_batch(self) -> Awaitable[Any]:
        return self.s.batch("delete", [self.where(self.choose()) for _ in range(self.batch_size)])

    def table(self) -> dict[str, Callable[[], Awaitable[Any]]]:
        ops = {
            "read": self.read,
            "update": self.update,
            "insert": self.insert,
            "scan": self.scan,
            "read_modify_write": self.read_modify_write,
            "insert_batch": self.insert_batch,
            "delete": self.delete,
            "delete_batch": self.delete_batch,
        }
        if self.schema != "ycsb":
            for name in ("scan",):
                ops.pop(name)
        if self.schema == "ttl":
            for name in ("delete", "delete_batch"):
                ops.pop(name)
        return ops
