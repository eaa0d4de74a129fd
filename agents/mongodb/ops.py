"""The YCSB ops on MongoDB: the built-in ops' keys, rows and mixes (``ycsb_ops.py``),
each op one pymongo call on the target's collection.

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

from collections.abc import Awaitable
from typing import Any

from loadtower.agents.mongodb.session import MongoSession
from loadtower.agents.mongodb.ycsb_ops import YcsbOps


class MongoOps(YcsbOps):
    def __init__(self, schema: str, session: MongoSession, *args: Any, **kwargs: Any) -> None:
        super().__init__(schema, session, *args, **kwargs)  # ops below use .m
        self.m = session

    def doc(self, k: int) -> dict[str, Any]:
        row = self.row(k)
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
