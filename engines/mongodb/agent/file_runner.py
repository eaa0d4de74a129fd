"""Workload-file calls on MongoDB (``agents/workload/file_ops.py``): each op's rendered
pymongo call (``call_spec.py`` ``MongoCallSpec``) on the target's
collection through the session's asyncio client (its write concern and read
preference), every failure under the stable classes of ``errors.py``.

- Templates are compiled once at prepare: each ``{"$param": name}`` mark takes the
  row's value as a BSON-friendly value of the parameter's portable type (int types:
  int; float, double: float; text; blob: bytes; uuid, timeuuid: BSON binary subtype 4,
  the standard representation; timestamp: a UTC datetime; date: midnight UTC;
  boolean). Every call gets fresh documents (pymongo adds ``_id`` to an inserted one).
- One row: the call itself (find and aggregate read their cursor to a list). N rows
  (``batch = N``, or a load's block): an insert is one unordered ``insert_many`` of the
  N documents, any other write one unordered ``bulk_write`` of N requests.
- What a call found, for ``expect = "rows"``: documents read, counted, matched (update,
  replace) or deleted; 0 is a miss (``NoRows``).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import UTC, date, datetime
from typing import Any, cast

from loadtower.agents.backends import PREPARE_TIMEOUT_S, prepare_retrying
from loadtower.agents.workload.file_ops import Row
from loadtower.engines.mongodb.agent.call_spec import MONGO_INSERTS, MongoCallSpec
from loadtower.engines.mongodb.agent.session import guarded
from loadtower.protocol.workload_file_spec import PARAM_MARK, StatementSpec

Build = Callable[[Row], Any]


class CollectionMissing(RuntimeError):
    """A collection worker 0 has not created (yet)."""


def _binary(value: Any) -> Any:
    from bson.binary import Binary, UuidRepresentation

    if isinstance(value, uuid.UUID):
        return Binary.from_uuid(value, UuidRepresentation.STANDARD)
    return value


def _float(value: Any) -> Any:
    return float(value) if isinstance(value, int) and not isinstance(value, bool) else value


def _bytes(value: Any) -> Any:
    return bytes(value) if isinstance(value, bytearray | memoryview) else value


def _date(value: Any) -> Any:
    if isinstance(value, date) and not isinstance(value, datetime):
        return datetime(value.year, value.month, value.day, tzinfo=UTC)
    return value


def _int(value: Any) -> Any:
    return int(value) if isinstance(value, float) and value.is_integer() else value


CONVERT: dict[str, Callable[[Any], Any]] = {
    "uuid": _binary, "timeuuid": _binary, "float": _float, "double": _float, "blob": _bytes,
    "date": _date, "tinyint": _int, "smallint": _int, "int": _int, "bigint": _int,
}  # fmt: skip


def converter(type_name: str | None) -> Callable[[Any], Any] | None:
    """The conversion of a parameter's values to BSON (None: as they are)."""
    return CONVERT.get(type_name or "")


def compile_template(node: Any, types: dict[str, str]) -> Build:
    """A function row -> the template with the row's values in place of the marks."""
    if isinstance(node, dict):
        if set(node) == {PARAM_MARK}:
            name = str(node[PARAM_MARK])
            convert = converter(types.get(name))
            if convert is None:
                return lambda row: row[name]
            return lambda row: convert(row[name])
        items = [(key, compile_template(value, types)) for key, value in node.items()]
        return lambda row: {key: build(row) for key, build in items}
    if isinstance(node, list):
        parts = [compile_template(value, types) for value in node]
        return lambda row: [build(row) for build in parts]
    return lambda row: node  # a constant: str, number, bool or None (immutable)


class Call:
    """One rendered call, compiled: what it sends for one row or for N rows."""

    def __init__(self, spec: MongoCallSpec, types: dict[str, str]) -> None:
        self.call, self.collection = spec["call"], spec["collection"]
        self.filter = compile_template(spec.get("filter", {}), types)
        self.document = compile_template(spec.get("document", {}), types)
        self.update = compile_template(spec.get("update", {}), types)
        self.pipeline = compile_template(spec.get("pipeline", []), types)
        self.sort = [(str(k), int(v)) for k, v in spec.get("sort", [])]
        limit = spec.get("limit")
        self.limit = compile_template(limit, types) if limit is not None else None

    async def one(self, coll: Any, row: Row) -> int:
        """The call for one row; what it found (read, counted, matched, deleted)."""
        call = self.call
        if call == "find_one":
            return 0 if await coll.find_one(self.filter(row)) is None else 1
        if call == "find":
            cursor = coll.find(self.filter(row))
            if self.sort:
                cursor = cursor.sort(self.sort)
            if self.limit is not None:
                cursor = cursor.limit(int(self.limit(row)))
            return len(await cursor.to_list())
        if call == "aggregate":
            return len(await (await coll.aggregate(self.pipeline(row))).to_list())
        if call == "count_documents":
            return int(await coll.count_documents(self.filter(row)))
        if call == "insert_one":
            await coll.insert_one(self.document(row))
            return 1
        if call == "insert_many":
            return await self.many(coll, [row])
        if call in ("update_one", "update_many"):
            method = coll.update_one if call == "update_one" else coll.update_many
            return int((await method(self.filter(row), self.update(row))).matched_count)
        if call == "replace_one":
            return int((await coll.replace_one(self.filter(row), self.document(row)))
                       .matched_count)
        method = coll.delete_one if call == "delete_one" else coll.delete_many
        return int((await method(self.filter(row))).deleted_count)

    async def many(self, coll: Any, rows: list[Row]) -> int:
        """N rows: one unordered insert_many (inserts) or bulk_write (other writes)."""
        if self.call in MONGO_INSERTS:
            result = await coll.insert_many([self.document(r) for r in rows], ordered=False)
            return len(result.inserted_ids)
        result = await coll.bulk_write(self.requests(rows), ordered=False)
        if self.call.startswith("delete"):
            return int(result.deleted_count)
        return int(result.matched_count)

    def requests(self, rows: list[Row]) -> list[Any]:
        from pymongo import DeleteMany, DeleteOne, ReplaceOne, UpdateMany, UpdateOne

        call = self.call
        if call == "update_one":
            return [UpdateOne(self.filter(r), self.update(r)) for r in rows]
        if call == "update_many":
            return [UpdateMany(self.filter(r), self.update(r)) for r in rows]
        if call == "replace_one":
            return [ReplaceOne(self.filter(r), self.document(r)) for r in rows]
        if call == "delete_one":
            return [DeleteOne(self.filter(r)) for r in rows]
        if call == "delete_many":
            return [DeleteMany(self.filter(r)) for r in rows]
        raise ValueError(f"a batch of {call} (a read) is not a MongoDB write")


class MongoFileRunner:
    def __init__(self, session: Any, collections: list[str]) -> None:
        self.session, self.collections = session, collections
        self.calls: dict[str, Call] = {}
        self._colls: dict[str, Any] = {}

    async def prepare(self, statements: dict[str, StatementSpec]) -> None:
        """Wait until worker 0 created the collections, then compile each call."""
        await prepare_retrying(self._collections_exist, errors=(CollectionMissing,))
        for name, statement in statements.items():
            spec = statement.get("call")
            if spec is None:
                raise ValueError(f"statement {name} has no mongodb call (rendered for "
                                 "another engine)")
            self.calls[name] = Call(cast(MongoCallSpec, spec), statement.get("types", {}))

    async def _collections_exist(self) -> None:
        for name in self.collections:
            if not await self.session.exists(name):
                raise CollectionMissing(f"collection {name} did not appear within "
                                        f"{PREPARE_TIMEOUT_S:g} s")

    def _coll(self, name: str) -> Any:
        coll = self._colls.get(name)
        if coll is None:
            coll = self._colls[name] = self.session.collection(name)
        return coll

    def send(self, name: str, statement: StatementSpec, rows: list[Row]) -> Any:
        call = self.calls[name]
        coll = self._coll(call.collection)
        if len(rows) == 1:
            return guarded(call.one(coll, rows[0]))
        return guarded(call.many(coll, rows))

    def found(self, result: Any) -> bool:
        return bool(result)
