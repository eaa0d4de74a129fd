"""The MongoDB ops (pymongo's async client) against a real MongoDB-protocol server
(FerretDB over SQLite, started for this module): every YCSB op leaves the collection as
it should, errors leave under their stable classes, and the agent engine loads in
``insert_many`` blocks and runs YCSB A with HDR measurement and no error."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Iterator
from typing import Any

import pymongo
import pytest

from loadtower.agents.engine import Engine, PhaseConfig
from loadtower.agents.mongodb.errors import (
    MongoAuthFailed,
    MongoDuplicateKey,
    MongoNetwork,
    MongoTimeout,
)
from loadtower.agents.mongodb.ops import MongoOps
from loadtower.agents.mongodb.session import MongoSession
from loadtower.agents.workload.values import ValuePool
from loadtower.scenarios.models import Dataset, Target, Workload, as_plain
from loadtower.store.rollups import AGENTS_PREFIX
from tests.mongodb.ferret import PASSWORD, USER, ferretdb_process, ferretdb_server

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]

FIELDS = 4
BATCH = 20


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


def make_ops(session: MongoSession, chosen: list[int], new: list[int]) -> MongoOps:
    rng = random.Random(3)
    return MongoOps(
        "ycsb", session, ValuePool(rng), FIELDS, 16, lambda: chosen[0],
        lambda: new.pop(0), BATCH, 10, rng,
    )


def test_every_ycsb_op_on_the_collection(server: tuple[str, int]) -> None:
    async def main() -> None:
        s = await connect(server, "lt_ops", write_concern="majority",
                          read_preference="primaryPreferred")
        try:
            await s.ddl(["create usertable"])
            await s.ddl(["create usertable"])  # again: it exists, nothing happens
            await s.bind("usertable")
            assert s.coll.write_concern.document == {"w": "majority"}
            assert s.coll.read_preference.mongos_mode == "primaryPreferred"
            chosen, new = [5], list(range(1000, 1000 + 3 * BATCH))
            ops = make_ops(s, chosen, new)
            await ops.insert_keys(0, 50)  # a load block: one insert_many
            assert await s.count("usertable") == 50
            doc = await ops.read()
            assert doc is not None and doc["_id"] == ops.key(5)
            assert sorted(doc) == ["_id", *(f"field{i}" for i in range(FIELDS))]
            await ops.update()
            after = await ops.read()
            changed = [f for f in doc if doc[f] != after[f]]
            assert len(changed) == 1 and changed[0].startswith("field")  # $set of one field
            await ops.read_modify_write()
            assert await s.count("usertable") == 50
            ids = sorted(ops.key(k) for k in range(50))
            for _ in range(5):  # scan: ids >= the chosen key, in order, at most scan_length
                found = [d["_id"] for d in await ops.scan()]
                start = ids.index(ops.key(5))
                assert 1 <= len(found) <= 10 and found == ids[start : start + len(found)]
            await ops.insert()
            assert await s.count("usertable") == 51
            await ops.insert_batch()  # one bulk_write of BATCH inserts
            assert await s.count("usertable") == 51 + BATCH
            await ops.delete()
            assert await s.count("usertable") == 50 + BATCH
            assert await ops.read() is None
            chosen[0] = 7
            await ops.delete_batch()  # BATCH deletes of key 7: one document goes
            assert await s.count("usertable") == 49 + BATCH
            with pytest.raises(MongoDuplicateKey):
                await ops.insert_key(0)
            with pytest.raises(MongoDuplicateKey):  # a load block over loaded keys
                await ops.insert_keys(0, 10)
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
    async def main(address: tuple[str, int], stop: Any) -> list[str]:
        s = await connect(address, "lt_down")
        try:
            await s.ddl(["create usertable"])
            await s.bind("usertable")
            ops = make_ops(s, [0], [])
            await ops.insert_keys(0, 5)
            stop()
            names = []
            for _ in range(2):
                try:
                    await ops.read()
                except Exception as exc:  # noqa: BLE001 - the class is what is checked
                    names.append(type(exc).__name__)
            return names
        finally:
            await s.close()

    with ferretdb_process() as (address, proc):
        names = asyncio.run(main(address, proc.kill))
    assert names and set(names) <= {MongoNetwork.__name__, MongoTimeout.__name__}, names


def spec(database: str, preset: str, records: int) -> dict:
    return {
        "engine": "mongodb",
        "target": as_plain(Target.model_validate({"keyspace": database, "write_concern": 1})),
        "dataset": as_plain(Dataset(records=records, fields=FIELDS, field_size=16)),
        "workload": as_plain(Workload.model_validate({"preset": preset, "batch_size": 100})),
        "workload_name": "w",
    }


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
    engine = Engine("agent1/0", "agent1", out=lines.append)
    engine.start()
    try:
        the_spec = spec("lt_engine", "ycsb-a", records=250)
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
        interval = next(x for x in lines if x.get("type") == "interval" and x["phase"] == "a")
        for stats in interval["ops"].values():
            assert stats["service_hist"].startswith(AGENTS_PREFIX)
            assert stats["response_hist"].startswith(AGENTS_PREFIX)
        with client(server) as c:
            assert c.lt_engine.usertable.count_documents({}) == 250  # updates add nothing
    finally:
        engine.shutdown()
