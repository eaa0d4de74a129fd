"""Every op of the built-in ycsb file's redis slots, as the agent runs it (FileOps over
the Redis runner and session), against a real redis-server of the module's own: a load
block is one pipeline, reads find what was written, an update changes one field, a scan
reads the records from its key on, deletes remove the record and its index entry; a
wrong password and a stopped server fail under their stable classes."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Iterator
from typing import Any

import pytest
import redis as redis_py

from loadtower.agents.backends import backend_for
from loadtower.agents.workload.file_ops import FileOps, interleaved
from loadtower.agents.workload.generators import Context
from loadtower.engines.redis.agent.errors import RedisAuthFailed, RedisConnection
from loadtower.engines.redis.agent.session import RedisSession
from loadtower.sandbox import processes as procs
from loadtower.scenarios.models import Dataset, Target, Workload
from loadtower.scenarios.workloads.target_spec import builtin_workload_file
from tests.redis.server import USER, redis_server

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]

FIELDS = 3
BATCH = 20
SCAN = 10
NEW = 1000  # run phases: new keys after the data set
EVERY_OP = ("read", "update", "insert", "scan", "read_modify_write", "insert_batch",
            "delete", "delete_batch")


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[str, int, str, procs.ProcessRecord]]:
    with redis_server() as found:
        yield found


def workload_file(keyspace: str, records: int) -> Any:
    target = Target.model_validate({"keyspace": keyspace})
    dataset = Dataset(records=records, fields=FIELDS, field_size=16)
    workload = Workload.model_validate({"schema": "ycsb", "mix": dict.fromkeys(EVERY_OP, 1),
                                        "batch_size": BATCH, "scan_length": SCAN})
    return builtin_workload_file("redis", target, dataset, workload)


def sync_client(server: tuple[str, int, str, Any]) -> redis_py.Redis:
    host, port, password, _ = server
    return redis_py.Redis(host=host, port=port, username=USER, password=password,
                          socket_timeout=10, decode_responses=True)


def text(reply: Any) -> Any:
    """A reply as text (the runner's client keeps bytes: Redis's own replies)."""
    if isinstance(reply, bytes):
        return reply.decode()
    if isinstance(reply, dict):
        return {text(k): text(v) for k, v in reply.items()}
    if isinstance(reply, list):
        return [text(v) for v in reply]
    return reply


class Ops:
    def __init__(self, session: RedisSession, wf: Any, records: int) -> None:
        runner = backend_for("redis").file_runner(session, wf)
        self.file = FileOps(interleaved(wf, NEW, 0, 1), runner, Context(random.Random(3), records))

    def key(self, k: int) -> str:
        return str(self.file.binders["read"].row(key=k)["y_id"])

    async def on(self, op: str, k: int, n: int = 1) -> Any:
        binder = self.file.binders[op]
        return await self.file.send(op, [binder.row(key=k + i) for i in range(n)])


def test_every_ycsb_op_on_a_real_server(server: tuple[str, int, str, Any]) -> None:
    host, port, password, _ = server
    wf = workload_file("lt_ops", 50)
    plain = sync_client(server)
    index = "lt_ops:usertable"

    def record(key: str) -> dict[str, str]:
        return plain.hgetall(f"{index}:{key}")

    async def main() -> None:
        s = RedisSession()
        await s.connect([f"{host}:{port}"], 6379, USER, password, pool_size=4)
        try:
            assert wf["ddl"] == [] and wf["tables"] == ["usertable"]
            await s.ddl(wf["ddl"])
            ops = Ops(s, wf, 50)
            await ops.file.runner.prepare(ops.file.statements())
            assert wf["load"] == "insert_batch"
            await ops.file.load(0, 50)  # blocks of BATCH rows, one pipeline each
            assert plain.zcard(index) == 50
            key = ops.key(5)
            before = record(key)
            assert sorted(before) == [f"field{i}" for i in range(FIELDS)]
            assert text(await ops.on("read", 5)) == before
            await ops.on("update", 5)
            after = record(key)
            changed = [f for f in before if before[f] != after[f]]
            assert len(changed) == 1  # HSET of the picked field
            snapshot = {k: record(k) for k in (ops.key(i) for i in range(50))}
            await ops.file.run("read_modify_write")
            now = {k: record(k) for k in snapshot}
            diffs = [(k, f) for k in now for f in now[k] if now[k][f] != snapshot[k][f]]
            assert len(diffs) == 1, diffs
            ids = sorted(ops.key(k) for k in range(50))
            for k in (5, 9, 47):  # scan: the records from the key on, in order, at most length
                row = ops.file.binders["scan"].row(key=k)
                found = await ops.file.send("scan", [row])
                start = ids.index(row["y_id"])
                expected = ids[start: start + row["length"]]
                assert text(found) == [record(i) for i in expected], (k, row["length"])
            await ops.file.run("insert")  # a new key after the data set
            assert plain.zcard(index) == 51
            await ops.file.run("insert_batch")
            assert plain.zcard(index) == 51 + BATCH
            await ops.on("delete", 5)
            assert plain.zcard(index) == 50 + BATCH and not plain.exists(f"{index}:{key}")
            assert await ops.on("read", 5) == {}  # a miss: no error (expect = "any")
            await ops.on("delete_batch", 7, BATCH)
            assert plain.zcard(index) == 50 + BATCH - len(set(range(7, 7 + BATCH)) - {5})
        finally:
            await s.close()
            for k in plain.scan_iter(match="lt_ops:*"):
                plain.delete(k)

    asyncio.run(main())


def test_a_wrong_password_is_one_line_naming_the_user(server: tuple[str, int, str, Any]) -> None:
    host, port, _, _ = server

    async def main() -> None:
        s = RedisSession()
        try:
            with pytest.raises(RedisAuthFailed, match=rf"Redis at {host}:{port} refused user "
                               f"'{USER}': authentication failed"):
                await s.connect([f"{host}:{port}"], 6379, USER, "not-the-password")
        finally:
            await s.close()

    asyncio.run(main())


def test_a_stopped_server_fails_ops_under_a_stable_class() -> None:
    with redis_server() as (host, port, password, record):
        async def main() -> None:
            s = RedisSession()
            await s.connect([f"{host}:{port}"], 6379, USER, password, pool_size=2)
            try:
                runner = backend_for("redis").file_runner(s, workload_file("lt_stop", 10))
                wf = workload_file("lt_stop", 10)
                file = FileOps(interleaved(wf, NEW, 0, 1), runner,
                               Context(random.Random(1), 10))
                await runner.prepare(file.statements())
                await file.run("read")
                procs.kill(record)
                with pytest.raises(RedisConnection):
                    await file.run("read")
            finally:
                await s.close()

        asyncio.run(main())
