"""The load agent's ClickHouse backend against the real ClickHouse engine (chdb over HTTP):
the agent engine dispatches to it, loads in blocks, runs the recipes mix with HDR
measurement, and every op (recipes and YCSB, insert or mutation updates, lightweight or
mutation deletes) leaves the table as it should."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Iterator
from typing import Any

import pytest

from loadtower.agents.backends import backend_for
from loadtower.agents.driver_loop import DriverLoop, PhaseConfig
from loadtower.agents.workload.file_ops import FileOps, interleaved
from loadtower.agents.workload.generators import Context
from loadtower.engines.clickhouse.sandbox.chdb_server import chdb_server
from loadtower.scenarios.models import Dataset, Target, Workload, as_plain
from loadtower.scenarios.workloads.target_spec import builtin_workload_file
from loadtower.store.rollups import AGENTS_PREFIX

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]

PASSWORD = "s3cret-ch"
RECIPES_TARGET = {
    "table_engine": "MergeTree",
    "order_by": ["id"],
    "skip_indexes": {"price_minmax": "total_price TYPE minmax GRANULARITY 1"},
    "settings": {"mutations_sync": 0},
}


@pytest.fixture(scope="module")
def endpoint() -> Iterator[tuple[str, int]]:
    with chdb_server(user="bench", password=PASSWORD) as address:
        yield address


def spec(database: str, preset: str, target: dict[str, Any], records: int, **workload: Any) -> dict:
    """A built-in workload's phase spec: its shipped file rendered, as the orchestrator
    sends it."""
    the_target = Target.model_validate({"keyspace": database, **target})
    dataset = Dataset(records=records, fields=4, field_size=16)
    the_workload = Workload.model_validate({"preset": preset, **workload})
    return {
        "engine": "clickhouse",
        "target": as_plain(the_target),
        "dataset": as_plain(dataset),
        "workload": as_plain(the_workload),
        "workload_name": "w",
        "workload_file": builtin_workload_file("clickhouse", the_target, dataset, the_workload),
    }


def config(endpoint: tuple[str, int], phase: str, mode: str, the_spec: dict) -> PhaseConfig:
    host, port = endpoint
    return PhaseConfig(
        phase=phase,
        mode=mode,
        spec=the_spec,
        contact_points=[f"{host}:{port}"],  # a per-host port; the default would be 8123
        port=None,
        username="bench",
        password=PASSWORD,
        driver="auto",
        records=the_spec["dataset"]["records"],
        max_in_flight=8,
        seed=11,
    )


def wait_for(check: Any, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(0.1)


def op_totals(lines: list[dict], phase: str) -> dict[str, tuple[int, int]]:
    """op -> (ops, errors) over the interval lines of a phase."""
    out: dict[str, tuple[int, int]] = {}
    for line in list(lines):
        if line.get("type") == "interval" and line["phase"] == phase:
            for op, s in line["ops"].items():
                ops, errors = out.get(op, (0, 0))
                out[op] = (ops + s["ops"], errors + sum(s["errors"].values()))
    return out


def scalar(endpoint: tuple[str, int], sql: str) -> Any:
    import clickhouse_connect

    client = clickhouse_connect.get_client(
        host=endpoint[0], port=endpoint[1], username="bench", password=PASSWORD
    )
    try:
        return client.command(sql)
    finally:
        client.close()


def test_agent_engine_loads_blocks_and_runs_the_recipes_mix(endpoint: tuple[str, int]) -> None:
    lines: list[dict] = []
    engine = DriverLoop("agent1/0", "agent1", out=lines.append)
    engine.start()
    try:
        the_spec = spec("lt_engine", "recipes", RECIPES_TARGET, records=250)
        engine.call(engine.configure(config(endpoint, "load", "load", the_spec)), 60)
        for lane in (1, 2):
            engine.add_lane(lane)
        wait_for(lambda: any(x.get("type") == "load_done" for x in lines), 60, "load_done")
        engine.stop_lanes()
        # the blocks may end in two seconds: wait for the interval of the last one
        loaded = lambda: op_totals(lines, "load").get("insert_batch", (0, 0))  # noqa: E731
        wait_for(lambda: sum(loaded()) >= 3, 10, "the load intervals")
        time.sleep(1.2)  # nothing more may come: one more second boundary
        # 250 records in blocks of batch_size=100: 100 + 100 + 50 rows, one insert each
        assert op_totals(lines, "load") == {"insert_batch": (3, 0)}
        assert scalar(endpoint, "SELECT count() FROM lt_engine.recipes") == 250
        create = scalar(endpoint, "SHOW CREATE TABLE lt_engine.recipes")
        assert "ENGINE = MergeTree" in create and "ORDER BY (id)" in create
        assert "INDEX price_minmax total_price TYPE minmax GRANULARITY 1" in create

        run = config(endpoint, "mix", "run", the_spec)  # closed model: lanes as fast as they can
        engine.call(engine.configure(run), 60)
        for lane in (3, 4):
            engine.add_lane(lane)
        mix = ("read", "insert", "insert_batch", "delete", "delete_batch")
        wait_for(
            lambda: all(op_totals(lines, "mix").get(op, (0, 0))[0] >= 3 for op in mix),
            90,
            "every recipes op three times",
        )
        engine.stop_lanes()
        time.sleep(1.5)  # the last second's interval
        totals = op_totals(lines, "mix")
        assert set(totals) == set(mix)
        assert all(errors == 0 for _ops, errors in totals.values()), totals
        # a second may close before the phase's first op does: its interval is empty
        busy = [
            x for x in lines if x.get("type") == "interval" and x["phase"] == "mix" and x["ops"]
        ]
        assert busy  # every op with HDR histograms of service and response time
        for stats in busy[0]["ops"].values():
            assert stats["service_hist"].startswith(AGENTS_PREFIX)  # uncompressed V2
            assert stats["response_hist"].startswith(AGENTS_PREFIX)
    finally:
        engine.shutdown()


def test_overload_advice_names_max_concurrent_queries(endpoint: tuple[str, int]) -> None:
    """A real code-202 refusal through an op: counted by class, advice sent once."""
    from loadtower.agents.workload.keys import OpMix

    lines: list[dict] = []
    engine = DriverLoop("agent1/0", "agent1", out=lines.append)
    engine.start()
    try:
        the_spec = spec("lt_busy", "recipes", {}, records=10)
        engine.call(engine.configure(config(endpoint, "busy", "run", the_spec)), 60)
        refuse = (
            "SELECT throwIf(1, 'Too many simultaneous queries. Maximum: 100', toInt16(202)) "
            "SETTINGS allow_custom_error_code_in_throwif = 1"
        )
        engine.ops["refused"] = lambda: engine.session.scalar(refuse)
        engine.mix = OpMix({"refused": 1}, random.Random(1))
        engine.add_lane(1)
        wait_for(lambda: op_totals(lines, "busy").get("refused", (0, 0))[1] >= 3, 30, "errors")
        engine.stop_lanes()
    finally:
        engine.shutdown()
    warnings = [x for x in lines if x.get("kind") == "warning"]
    assert len(warnings) == 1, warnings
    assert "max_concurrent_queries" in warnings[0]["message"]
    classes = [s["errors"] for x in lines if x.get("type") == "interval" for s in x["ops"].values()]
    assert all(set(c) <= {"ClickhouseOverloaded"} for c in classes)


class Ops:
    """A built-in's ops as the agent runs them (its shipped file: FileOps over the
    ClickHouse runner), with rows of chosen key numbers."""

    def __init__(self, session: Any, wf: Any) -> None:
        backend = backend_for("clickhouse")
        self.wf = wf
        self.file = FileOps(interleaved(wf, 10_000, 0, 1), backend.file_runner(session, wf),
                            Context(random.Random(2), 100))

    def row(self, op: str, k: int) -> dict[str, Any]:
        return self.file.binders[op].row(key=k)

    async def on(self, op: str, k: int, n: int = 1) -> Any:
        """Op `op` (its statement, its batch) with rows of key numbers k .. k + n - 1."""
        return await self.file.send(op, [self.row(op, k + i) for i in range(n)])


async def backend_ops(endpoint: tuple[str, int], the_spec: dict) -> tuple[Any, Ops]:
    backend = backend_for("clickhouse")
    cfg = config(endpoint, "t", "run", the_spec)
    session = await backend.open(cfg)
    wf = the_spec["workload_file"]
    await session.ddl(list(wf["ddl"]))
    ops = Ops(session, wf)
    await ops.file.runner.prepare(ops.file.statements())
    return session, ops


def test_ycsb_ops_with_mutation_updates_and_deletes(endpoint: tuple[str, int]) -> None:
    target = {
        "update_mode": "mutation",
        "delete_mode": "mutation",
        "settings": {"mutations_sync": 2, "max_threads": 3},
    }
    the_spec = spec("lt_ycsb_mut", "ycsb-a", target, records=100)

    async def run() -> None:
        session, ops = await backend_ops(endpoint, the_spec)
        count = "SELECT count() FROM lt_ycsb_mut.usertable FINAL"
        key = ops.row("read", 7)["y_id"]
        try:
            # the scenario's settings reach the server with every query
            assert await session.scalar("SELECT getSetting('mutations_sync')") == 2
            assert await session.scalar("SELECT getSetting('max_threads')") == 3
            assert session.statements["update/0"].startswith("ALTER TABLE")
            assert session.statements["delete/0"].startswith("ALTER TABLE")
            assert the_spec["workload_file"]["load"] == "insert_batch"
            await ops.file.load(0, 100)  # a load block: one insert of 100 rows
            assert await session.scalar(count) == 100
            before = (await ops.on("read", 7))[0]
            assert before[0] == key
            await ops.on("update", 7)  # ALTER TABLE ... UPDATE, synchronous (mutations_sync)
            after = (await ops.on("read", 7))[0]
            assert after[0] == before[0] and after != before
            assert sum(a != b for a, b in zip(after, before, strict=True)) == 1  # one field
            await ops.file.run("read_modify_write")
            await ops.file.run("insert")  # a new key after the data set
            assert await session.scalar(count) == 101
            scanned = await session.execute_named("scan/0", {"y_id": key, "length": 3})
            keys = sorted(ops.row("read", k)["y_id"] for k in range(100))
            assert [r[0] for r in scanned] == [k for k in keys if k >= key][:3]
            await ops.on("delete", 7)  # ALTER TABLE ... DELETE of key 7
            assert await ops.on("read", 7) == []  # a miss: no error (expect = "any")
            assert await session.scalar(count) == 100
            await ops.on("delete_batch", 7, 50)  # 50 keys 7.., one statement
            assert await session.scalar(count) == 100 - 49
        finally:
            await session.close()

    asyncio.run(run())


def test_recipes_ops_on_the_studys_merge_tree(endpoint: tuple[str, int]) -> None:
    target = {**RECIPES_TARGET, "update_mode": "mutation", "settings": {"mutations_sync": 2}}
    the_spec = spec("lt_recipes_mt", "recipes", target, records=100)

    async def run() -> None:
        session, ops = await backend_ops(endpoint, the_spec)
        count = "SELECT count() FROM lt_recipes_mt.recipes"
        try:
            assert "FINAL" not in session.statements["read/0"]  # plain MergeTree
            await ops.file.load(0, 100)
            assert await session.scalar(count) == 100
            row = ops.row("insert", 7)
            got = await ops.on("read", 7)
            assert len(got) == 1 and got[0][0] == row["id"]
            assert got[0][3] == row["total_price"]
            await ops.on("update", 7)  # ALTER TABLE ... UPDATE title, link of key 7
            changed = (await ops.on("read", 7))[0]
            assert changed[0] == got[0][0] and changed[1:3] != got[0][1:3]
            await ops.file.run("insert")  # insert 1
            await ops.file.run("insert_batch")  # insert 100 (batch_size) as ONE insert
            assert await session.scalar(count) == 201
            await ops.on("delete", 7)  # lightweight DELETE of key 7
            assert await ops.on("read", 7) == []
            assert await session.scalar(count) == 200
            await ops.on("delete_batch", 10, 30)  # delete 30, one statement
            assert await session.scalar(count) == 170
            assert await session.optimize_final("recipes") > 0
            assert await session.scalar(count) == 170
        finally:
            await session.close()

    asyncio.run(run())
