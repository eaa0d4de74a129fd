"""The built-in ycsb on MongoDB, as the orchestrator renders it now (its shipped file's
mongodb slots, scenarios/builtin/workloads/ycsb.toml, through ``builtin_workload_file``)
and as the agent runs it (FileOps over MongoFileRunner), makes the calls the engine's
own MongoOps made before it was removed (kept as tests/mongodb/builtin_reference.py):
for every op and the load, the same call kind, filter, _id, field names, sort, limit
range, ordering and batch size. Both sides run their real code against one call
recorder standing in for the collection (what a call SENDS is compared here;
tests/mongodb/test_mongodb_builtin_ops.py runs the same path on FerretDB).

Field values are random on both sides: documents are compared by _id and field names,
values by type. A bulk_write of InsertOne requests and an insert_many are the same wire
command (one unordered ``insert`` of the documents): both show as insert_many."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from types import SimpleNamespace
from typing import Any

import pytest

from loadtower.agents.workload.file_ops import FileOps, interleaved
from loadtower.agents.workload.generators import Context
from loadtower.agents.workload.values import ValuePool
from loadtower.engines.mongodb.agent.file_runner import MongoFileRunner
from loadtower.scenarios.models import Dataset, Target, Workload
from loadtower.scenarios.workloads.target_spec import builtin_workload_file
from tests.mongodb.builtin_reference import MongoOps

FIELDS, FIELD_SIZE, BATCH, SCAN = 4, 16, 20, 10
NEW = 1000  # the first new key of inserts on both sides
OPS = ("read", "update", "insert", "scan", "read_modify_write", "insert_batch", "delete",
       "delete_batch")


def shape(node: Any) -> Any:
    """A document or filter with its field values as their types (_id kept)."""
    if isinstance(node, dict):
        return {k: (v if k == "_id" else shape(v)) for k, v in node.items()}
    if isinstance(node, list):
        return [shape(v) for v in node]
    return type(node).__name__


def update_shape(update: dict) -> Any:
    """{"$set": {"fieldI": str}} with I checked and dropped (both pick it at random)."""
    (op, change), = update.items()
    (field, value), = change.items()
    assert field.startswith("field") and 0 <= int(field[5:]) < FIELDS
    return {op: {"field?": type(value).__name__}}


class Cursor:
    def __init__(self, log: list, filter: dict) -> None:
        self.log, self.call = log, ["find", shape(filter), None, None]

    def sort(self, key: Any, direction: int | None = None) -> Cursor:
        self.call[2] = [(key, direction)] if isinstance(key, str) else [tuple(p) for p in key]
        return self

    def limit(self, n: int) -> Cursor:
        assert 1 <= n <= SCAN
        self.call[3] = "1..scan_length"
        return self

    async def to_list(self) -> list:
        self.log.append(tuple(self.call))
        return [{}]


class Recorder:
    """What the collection was asked, normalised (see the module docstring)."""

    def __init__(self) -> None:
        self.log: list[tuple] = []

    async def find_one(self, filter: dict) -> dict:
        self.log.append(("find_one", shape(filter)))
        return {}

    def find(self, filter: dict) -> Cursor:
        return Cursor(self.log, filter)

    async def insert_one(self, doc: dict) -> Any:
        self.log.append(("insert_one", shape(doc)))
        return SimpleNamespace(inserted_id=doc["_id"])

    async def insert_many(self, docs: list, ordered: bool = True) -> Any:
        self.log.append(("insert_many", [shape(d) for d in docs], ordered))
        return SimpleNamespace(inserted_ids=[d["_id"] for d in docs])

    async def update_one(self, filter: dict, update: dict) -> Any:
        self.log.append(("update_one", shape(filter), update_shape(update)))
        return SimpleNamespace(matched_count=1)

    async def delete_one(self, filter: dict) -> Any:
        self.log.append(("delete_one", shape(filter)))
        return SimpleNamespace(deleted_count=1)

    async def bulk_write(self, requests: list, ordered: bool = True) -> Any:
        from pymongo import DeleteOne, InsertOne

        if all(isinstance(r, InsertOne) for r in requests):
            self.log.append(("insert_many", [shape(r._doc) for r in requests], ordered))
        else:
            assert all(isinstance(r, DeleteOne) for r in requests)
            self.log.append(("bulk_write/delete_one", [shape(r._filter) for r in requests],
                             ordered))
        return SimpleNamespace(deleted_count=len(requests), matched_count=len(requests))


class Session:
    """MongoSession's surface both sides use, on the recorder."""

    def __init__(self, coll: Recorder) -> None:
        self.coll = coll

    def run(self, call: Callable[[Any], Awaitable[Any]]) -> Awaitable[Any]:
        return call(self.coll)

    def collection(self, name: str) -> Recorder:
        assert name == "usertable"
        return self.coll

    async def exists(self, name: str) -> bool:
        return name == "usertable"


def builtin_ops() -> MongoOps:
    rng = random.Random(1)
    new = iter(range(NEW, NEW + 10_000))
    return MongoOps(Session(Recorder()), ValuePool(rng), FIELDS, FIELD_SIZE,
                    lambda: 0, lambda: next(new), BATCH, SCAN, rng)


def file_ops() -> FileOps:
    """The built-in ycsb (every op in its mix) rendered for a MongoDB target, as the
    orchestrator sends it in a phase spec's ``workload_file``."""
    workload = Workload.model_validate({
        "schema": "ycsb", "mix": dict.fromkeys(OPS, 1), "distribution": "uniform",
        "batch_size": BATCH, "scan_length": SCAN})
    spec = builtin_workload_file("mongodb", Target(keyspace="lt"),
                                 Dataset(records=1, fields=FIELDS, field_size=FIELD_SIZE),
                                 workload)
    assert spec["load"] == "insert_batch"  # a built-in's load on MongoDB: blocks
    runner = MongoFileRunner(Session(Recorder()), spec["tables"])
    # one record (key 0: what the built-in's chooser returns here); new keys from NEW
    ops = FileOps(interleaved(spec, NEW, 0, 1), runner, Context(random.Random(1), 1))
    asyncio.run(runner.prepare(ops.statements()))
    return ops


def log_of(ops: Any) -> list[tuple]:
    session = ops.m if isinstance(ops, MongoOps) else ops.runner.session
    out = list(session.coll.log)
    session.coll.log.clear()
    return out


@pytest.mark.parametrize("op", OPS)
def test_each_op_makes_the_builtins_calls(op: str) -> None:
    builtin, mine = builtin_ops(), file_ops()
    assert set(mine.run_specs) == set(builtin.table())
    asyncio.run(builtin.table()[op]())
    asyncio.run(mine.run(op))
    theirs, ours = log_of(builtin), log_of(mine)
    assert ours == theirs and theirs, (ours, theirs)


def test_the_load_is_the_builtins_insert_many_blocks() -> None:
    """The load op the rendered spec names (insert_batch, BATCH rows a block), run as the
    engine's load lanes run it (FileOps.load over a block of key numbers)."""
    builtin, mine = builtin_ops(), file_ops()
    assert mine.load_op == "insert_batch"
    rows = mine.load_rows(7)  # the backend's load_rows (7 here): the op's batch wins
    assert rows == BATCH
    asyncio.run(builtin.insert_keys(40, rows))
    asyncio.run(mine.load(40, rows))
    theirs, ours = log_of(builtin), log_of(mine)
    assert ours == theirs, (ours, theirs)
    assert ours[0][0] == "insert_many" and len(ours[0][1]) == BATCH and ours[0][2] is False
    assert [d["_id"] for d in ours[0][1]] == [builtin.key(k) for k in range(40, 40 + BATCH)]
    assert set(ours[0][1][0]) == {"_id", *(f"field{i}" for i in range(FIELDS))}
