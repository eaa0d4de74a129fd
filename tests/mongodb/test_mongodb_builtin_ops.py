"""The built-in ycsb on MongoDB as the agent runs it (its shipped file's ``mongodb``
slots rendered by ``builtin_workload_file``, FileOps over MongoFileRunner and pymongo's
async client) against a real MongoDB-protocol server (FerretDB over SQLite, started for
this module): every YCSB op leaves the collection as it should, errors leave under
their stable classes, and the agent engine loads in ``insert_many`` blocks and runs
YCSB A with HDR measurement and no error."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Iterator
from typing import Any

import pymongo
import pytest

from loadtower.agents.backends import backend_for
from loadtower.agents.driver_loop import DriverLoop, PhaseConfig
from loadtower.agents.workload.file_ops import FileOps, interleaved
from loadtower.agents.workload.generators import Context
from loadtower.engines.mongodb.agent.errors import (
    MongoAuthFailed,
    MongoDuplicateKey,
    MongoNetwork,
    MongoTimeout,
)
from loadtower.engines.mongodb.agent.session import MongoSession
from loadtower.scenarios.models import Dataset, Target, Workload, as_plain
from loadtower.scenarios.workloads.target_spec import builtin_workload_file
from loadtower.store.rollups import AGENTS_PREFIX
from tests.mongodb.ferret import PASSWORD, USER, ferretdb_process, ferretdb_server

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]

FIELDS = 4
BATCH = 20
SCAN = 10
NEW = 1000  # run phases: new keys after the data set (the engine's key offset)
EVERY_OP = ("read", "update", "insert", "scan", "read_modify_write", "insert_batch",
            "delete", "delete_batch")


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[str, int]]:
    with ferretdb_server() as address:
        yield address


def client(server: tuple[str, int]) -> pymongo.MongoClient:
    host, port = server
    return pymongo.MongoClient(
        host, port, username=USER, password=PASSWORD, authSource="admin",
        serverSelectionTimeoutMS=5000,
    )


async def connect(server: tuple[str, int], database: str, **kw: Any) -> MongoSession:
    session = MongoSession()
    host, port = server
    await session.connect([f"{host}:{port}"], 27017, USER, PASSWORD, database, **kw)
    return session


def spec(database: str, records: int, **workload: Any) -> dict:
    """A built-in workload's phase spec: its shipped file rendered for a MongoDB target,
    as the orchestrator sends it."""
    target = Target.model_validate({"keyspace": database, "write_concern": 1})
    dataset = Dataset(records=records, fields=FIELDS, field_size=16)
    the_workload = Workload.model_validate(workload)
    return {
        "engine": "mongodb",
        "target": as_plain(target),
        "dataset": as_plain(dataset),
        "workload": as_plain(the_workload),
        "workload_name": "w",
        "workload_file": builtin_workload_file("mongodb", target, dataset, the_workload),
    }


class Found:
    """The session as the runner sees it, keeping what each scan's cursor returned (the
    documents themselves; the runner counts them)."""

    def __init__(self, session: MongoSession) -> None:
        self.session = session
        self.scanned: list[list[dict]] = []

    async def exists(self, name: str) -> bool:
        return await self.session.exists(name)

    def collection(self, name: str) -> Any:
        return _Collection(self.session.collection(name), self.scanned)


class _Collection:
    def __init__(self, coll: Any, scanned: list[list[dict]]) -> None:
        self.coll, self.scanned = coll, scanned

    def __getattr__(self, name: str) -> Any:
        return getattr(self.coll, name)

    def find(self, *args: Any, **kw: Any) -> Any:
        return _Cursor(self.coll.find(*args, **kw), self.scanned)


class _Cursor:
    def __init__(self, cursor: Any, scanned: list[list[dict]]) -> None:
        self.cursor, self.scanned = cursor, scanned

    def sort(self, *args: Any) -> _Cursor:
        self.cursor = self.cursor.sort(*args)
        return self

    def limit(self, n: int) -> _Cursor:
        self.cursor = self.cursor.limit(n)
        return self

    async def to_list(self) -> list[dict]:
        docs = await self.cursor.to_list()
        self.scanned.append(docs)
        return docs


class Ops:
    """The built-in's ops as the agent runs them (FileOps over the MongoDB runner), with
    rows of chosen key numbers."""

    def __init__(self, session: MongoSession, wf: Any, records: int) -> None:
        self.found = Found(session)
        runner = backend_for("mongodb").file_runner(self.found, wf)
        self.file = FileOps(interleaved(wf, NEW, 0, 1), runner, Context(random.Random(3), records))

    async def prepare(self) -> None:
        await self.file.runner.prepare(self.file.statements())

    def key(self, k: int) -> str:
        return str(self.file.binders["read"].row(key=k)["y_id"])

    async def on(self, op: str, k: int, n: int = 1) -> Any:
        """Op `op` (its call; a batch for n > 1) with rows of key numbers k .. k + n - 1."""
        binder = self.file.binders[op]
        return await self.file.send(op, [binder.row(key=k + i) for i in range(n)])


def test_every_ycsb_op_on_the_collection(server: tuple[str, int]) -> None:
    the_spec = spec("lt_ops", 50, schema="ycsb", mix=dict.fromkeys(EVERY_OP, 1),
                    batch_size=BATCH, scan_length=SCAN)
    wf = the_spec["workload_file"]

    async def main() -> None:
        s = await connect(server, "lt_ops", write_concern="majority",
                          read_preference="primaryPreferred")
        try:
            assert wf["ddl"] == ["create usertable"]
            await s.ddl(wf["ddl"])
            await s.ddl(wf["ddl"])  # again: it exists, nothing happens
            coll = s.collection("usertable")
            assert coll.write_concern.document == {"w": "majority"}
            assert coll.read_preference.mongos_mode == "primaryPreferred"
            ops = Ops(s, wf, 50)
            await ops.prepare()
            assert wf["load"] == "insert_batch"
            await ops.file.load(0, 50)  # a load block: one insert_many
            assert await s.count("usertable") == 50
            key = ops.key(5)
            doc = await coll.find_one({"_id": key})
            assert doc is not None and sorted(doc) == ["_id", *(f"field{i}" for i in range(FIELDS))]
            assert await ops.on("read", 5) == 1
            assert await ops.on("update", 5) == 1  # matched
            after = await coll.find_one({"_id": key})
            changed = [f for f in doc if doc[f] != after[f]]
            assert len(changed) == 1 and changed[0].startswith("field")  # $set of one field
            before = {d["_id"]: d for d in await coll.find({}).to_list()}
            await ops.file.run("read_modify_write")  # a read, then an update of its key
            now = {d["_id"]: d for d in await coll.find({}).to_list()}
            assert set(now) == set(before)
            diffs = [(i, f) for i in now for f in now[i] if now[i][f] != before[i][f]]
            assert len(diffs) == 1 and diffs[0][1].startswith("field"), diffs
            ids = sorted(ops.key(k) for k in range(50))
            for k in (5, 9, 47):  # scan: ids >= the key, in order, at most its length
                row = ops.file.binders["scan"].row(key=k)
                assert await ops.file.send("scan", [row]) == len(ops.found.scanned[-1])
                found = [d["_id"] for d in ops.found.scanned.pop()]
                start = ids.index(row["y_id"])
                assert 1 <= row["length"] <= SCAN
                assert found == ids[start : start + row["length"]], (k, row["length"])
            await ops.file.run("scan")  # a key the workload's distribution draws
            found = [d["_id"] for d in ops.found.scanned.pop()]
            assert 1 <= len(found) <= SCAN and found == ids[ids.index(found[0]):][: len(found)]
            await ops.file.run("insert")  # a new key after the data set
            assert await s.count("usertable") == 51
            await ops.file.run("insert_batch")  # one insert_many of BATCH new keys
            assert await s.count("usertable") == 51 + BATCH
            assert await ops.on("delete", 5) == 1
            assert await s.count("usertable") == 50 + BATCH
            assert await ops.on("read", 5) == 0  # a miss: no error (expect = "any")
            assert await ops.on("delete_batch", 7, BATCH) == BATCH  # one bulk_write
            assert await s.count("usertable") == 50
            with pytest.raises(MongoDuplicateKey):
                await ops.on("insert", 0)
            with pytest.raises(MongoDuplicateKey):  # a load block over loaded keys
                await ops.file.load(0, 10)
        finally:
            await s.close()

    asyncio.run(main())


def test_wrong_password_is_one_line_naming_the_user(server: tuple[str, int]) -> None:
    async def main() -> None:
        session = MongoSession()
        host, port = server
        try:
            with pytest.raises(MongoAuthFailed) as caught:
                await session.connect([f"{host}:{port}"], 0, USER, "wrong", "lt_auth")
        finally:
            await session.close()
        message = str(caught.value)
        assert "\n" not in message and f"user '{USER}'" in message and str(port) in message

    asyncio.run(main())


def test_a_stopped_server_fails_ops_as_network_or_timeout() -> None:
    wf = spec("lt_down", 5, preset="ycsb-c")["workload_file"]

    async def main(address: tuple[str, int], stop: Any) -> list[str]:
        s = await connect(address, "lt_down")
        try:
            await s.ddl(wf["ddl"])
            ops = Ops(s, wf, 5)
            await ops.prepare()
            await ops.file.load(0, 5)
            stop()
            names = []
            for _ in range(2):
                try:
                    await ops.file.run("read")
                except Exception as exc:  # noqa: BLE001 - the class is what is checked
                    names.append(type(exc).__name__)
            return names
        finally:
            await s.close()

    with ferretdb_process() as (address, proc):
        names = asyncio.run(main(address, proc.kill))
    assert names and set(names) <= {MongoNetwork.__name__, MongoTimeout.__name__}, names


def config(server: tuple[str, int], phase: str, mode: str, the_spec: dict, rate: float | None
           ) -> PhaseConfig:
    host, port = server
    return PhaseConfig(
        phase=phase, mode=mode, spec=the_spec, contact_points=[f"{host}:{port}"], port=None,
        username=USER, password=PASSWORD, driver="auto", records=the_spec["dataset"]["records"],
        max_in_flight=16, seed=5, lane_rate=rate,
    )


def wait_for(check: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(0.1)


def op_totals(lines: list[dict], phase: str) -> dict[str, tuple[int, int]]:
    out: dict[str, tuple[int, int]] = {}
    for line in list(lines):
        if line.get("type") == "interval" and line["phase"] == phase:
            for op, s in line["ops"].items():
                ops, errors = out.get(op, (0, 0))
                out[op] = (ops + s["ops"], errors + sum(s["errors"].values()))
    return out


def test_agent_engine_loads_blocks_and_runs_ycsb_a(server: tuple[str, int]) -> None:
    lines: list[dict] = []
    engine = DriverLoop("agent1/0", "agent1", out=lines.append)
    engine.start()
    try:
        the_spec = spec("lt_engine", 250, preset="ycsb-a", batch_size=100)
        engine.call(engine.configure(config(server, "load", "load", the_spec, None)), 60)
        for lane in (1, 2):
            engine.add_lane(lane)
        wait_for(lambda: any(x.get("type") == "load_done" for x in lines), 60, "load_done")
        loaded = lambda: op_totals(lines, "load").get("insert_batch", (0, 0))  # noqa: E731
        wait_for(lambda: sum(loaded()) >= 3, 10, "the load intervals")
        # 250 records in insert_many blocks of batch_size=100: 100 + 100 + 50
        assert op_totals(lines, "load") == {"insert_batch": (3, 0)}
        with client(server) as c:
            assert c.lt_engine.usertable.count_documents({}) == 250

        run = config(server, "a", "run", the_spec, 50.0)  # open model, 50 ops/s per lane
        engine.call(engine.configure(run), 60)
        for lane in (3, 4):
            engine.add_lane(lane)
        wait_for(
            lambda: all(op_totals(lines, "a").get(op, (0, 0))[0] >= 10 for op in ("read", "update")),
            60, "reads and updates",
        )
        engine.call(engine.drain(), 60)
        totals = op_totals(lines, "a")
        assert set(totals) == {"read", "update"}
        assert all(errors == 0 for _ops, errors in totals.values()), totals
        # a second may close before the phase's first op does: its interval is empty
        busy = [x for x in lines if x.get("type") == "interval" and x["phase"] == "a" and x["ops"]]
        assert busy
        for stats in busy[0]["ops"].values():
            assert stats["service_hist"].startswith(AGENTS_PREFIX)
            assert stats["response_hist"].startswith(AGENTS_PREFIX)
        with client(server) as c:
            assert c.lt_engine.usertable.count_documents({}) == 250  # updates add nothing
    finally:
        engine.shutdown()
