"""What the engine's own MongoDB code sent for the built-in ycsb before the built-in
became its shipped workload file (engines/mongodb/agent/ops.py ``MongoOps`` over the built-in
ops' keys and rows, removed in the merge 372a77d): each op's pymongo call and the
load's, kept as the reference that tests/mongodb/test_mongodb_file_builtin.py holds
ycsb.toml's ``mongodb`` slots to. Keys and rows are the CQL ops' (``Rows`` of
tests/scenarios/builtin_reference.py); only ycsb had a MongoDB form.

A ycsb record is the document ``{_id: "user<fnv64(k)>", field0: ..., fieldN: ...}``:

- read: ``find_one({_id})``; update: ``update_one({_id}, {$set: {fieldI: v}})`` of one
  random field; insert: ``insert_one``; delete: ``delete_one({_id})``;
- scan: ``find({_id: {$gte: key}}).sort(_id).limit(n)`` (a range on ``_id``, n drawn in
  1..scan_length as YCSB draws it); read_modify_write: the read, then the update;
- insert_batch / delete_batch: one unordered ``bulk_write`` of ``batch_size`` inserts /
  deletes;
- the load (``insert_keys``): one unordered ``insert_many`` of a block of
  ``batch_size`` documents (the backend's ``load_rows``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from loadtower.agents.workload.values import ValuePool
from tests.scenarios.builtin_reference import Rows


class MongoOps:
    """The ycsb ops over a session (``run(call)`` on the collection); each op is an
    awaitable factory."""

    def __init__(
        self,
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
        self.m, self.values, self.rows = session, values, Rows("ycsb", values, fields, field_size)
        self.fields, self.field_size = fields, field_size
        self.choose, self.new_key = choose, new_key
        self.batch_size, self.scan_length, self.rng = batch_size, scan_length, rng

    def key(self, k: int) -> str:
        return str(self.rows.key(k))

    def doc(self, k: int) -> dict[str, Any]:
        row = self.rows.row(k)
        return {"_id": row[0], **{f"field{i}": v for i, v in enumerate(row[1:])}}

    def _value(self) -> str:
        return self.values.text(self.field_size)

    def insert_key(self, k: int) -> Awaitable[Any]:
        doc = self.doc(k)
        return self.m.run(lambda c: c.insert_one(doc))

    def insert_keys(self, first: int, count: int) -> Awaitable[Any]:
        docs = [self.doc(k) for k in range(first, first + count)]
        return self.m.run(lambda c: c.insert_many(docs, ordered=False))

    def _read(self, key: str) -> Awaitable[Any]:
        return self.m.run(lambda c: c.find_one({"_id": key}))

    def _update(self, key: str) -> Awaitable[Any]:
        change = {"$set": {f"field{self.rng.randrange(self.fields)}": self._value()}}
        return self.m.run(lambda c: c.update_one({"_id": key}, change))

    def read(self) -> Awaitable[Any]:
        return self._read(self.key(self.choose()))

    def update(self) -> Awaitable[Any]:
        return self._update(self.key(self.choose()))

    def insert(self) -> Awaitable[Any]:
        return self.insert_key(self.new_key())

    def scan(self) -> Awaitable[Any]:
        length = self.rng.randint(1, self.scan_length)
        start = self.key(self.choose())
        return self.m.run(
            lambda c: c.find({"_id": {"$gte": start}}).sort("_id", 1).limit(length).to_list()
        )

    async def read_modify_write(self) -> None:
        key = self.key(self.choose())
        await self._read(key)
        await self._update(key)

    def insert_batch(self) -> Awaitable[Any]:
        from pymongo import InsertOne

        requests = [InsertOne(self.doc(self.new_key())) for _ in range(self.batch_size)]
        return self.m.run(lambda c: c.bulk_write(requests, ordered=False))

    def delete(self) -> Awaitable[Any]:
        key = self.key(self.choose())
        return self.m.run(lambda c: c.delete_one({"_id": key}))

    def delete_batch(self) -> Awaitable[Any]:
        from pymongo import DeleteOne

        requests = [DeleteOne({"_id": self.key(self.choose())}) for _ in range(self.batch_size)]
        return self.m.run(lambda c: c.bulk_write(requests, ordered=False))

    def table(self) -> dict[str, Callable[[], Awaitable[Any]]]:
        return {
            "read": self.read,
            "update": self.update,
            "insert": self.insert,
            "scan": self.scan,
            "read_modify_write": self.read_modify_write,
            "insert_batch": self.insert_batch,
            "delete": self.delete,
            "delete_batch": self.delete_batch,
        }
