"""Workload-file ops on real ClickHouse SQL (chdb over HTTP, as the sandbox's ClickHouse
host): study 1's file rendered for a ClickHouse target (scenarios/workloads/target_spec),
its DDL run, its statements prepared and every op run by the agents' executor
(agents/workload/file_ops.py through engines/clickhouse/agent/file_runner.py and the session):
the load writes the rows, reads with expect = "rows" find them, a 20-row insert is one
insert, the list delete removes its rows, and a read over keys nobody wrote is NoRows."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from loadtower.agents.workload.file_ops import FileOps, NoRows, interleaved
from loadtower.agents.workload.generators import Context
from loadtower.engines.clickhouse.agent.file_runner import ClickhouseFileRunner
from loadtower.engines.clickhouse.agent.session import ClickhouseSession
from loadtower.engines.clickhouse.sandbox.chdb_server import chdb_server
from loadtower.scenarios.models import Target, Workload
from loadtower.scenarios.workloads.loader import load_workload_file
from loadtower.scenarios.workloads.target_spec import render_for_target

PASSWORD = "secret"
STUDY1 = Path(__file__).resolve().parents[2] / "scenarios/examples/workloads/study1-recipes.toml"
RECORDS = 300
DB = "lt_wl_ch"


pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]  # chdb, as its siblings


@pytest.fixture(scope="module")
def endpoint() -> Iterator[tuple[str, int]]:
    with chdb_server(user="default", password=PASSWORD) as address:
        yield address


async def exercise(endpoint: tuple[str, int]) -> dict[str, int]:
    checked = load_workload_file(STUDY1, {"batch_size": 20})
    spec = render_for_target(checked, Workload(file=str(STUDY1)), "clickhouse",
                             Target(keyspace=DB, settings={"mutations_sync": 2}))
    session = ClickhouseSession(threads=4)
    host, port = endpoint
    await session.connect([host], port, "default", PASSWORD, "ONE", database=DB,
                          settings={"mutations_sync": 2})
    out: dict[str, int] = {}
    try:
        await session.ddl([f"DROP DATABASE IF EXISTS {DB}", *spec["ddl"]])
        runner = ClickhouseFileRunner(session, spec["tables"])
        load = FileOps(spec, runner, Context(random.Random(3), RECORDS))
        await runner.prepare(load.statements())
        assert load.load_op == "insert_one" and load.load_rows(100) == 100
        for first in range(0, RECORDS, 100):
            await load.load(first, 100)

        async def count() -> int:
            return int(await session.scalar(f"SELECT count() FROM {DB}.recipes"))

        out["loaded"] = await count()
        run = FileOps(interleaved(spec, RECORDS, 0, 1), runner,
                      Context(random.Random(4), RECORDS))
        for op in ("select_by_id", "multi_condition", "update_title", "price_range",
                   "aggregate"):
            for _ in range(5):
                await run.run(op)
        await run.run("insert_100")
        out["after_insert"] = await count()
        await run.run("delete_100")  # DELETE ... WHERE id IN {id:Array(UUID)}: 20 loaded ids
        out["after_delete"] = await count()
        # uniform keys over 10^9 records: none of them written (seeded: the same draws)
        gone = FileOps(spec, runner, Context(random.Random(5), 10**9))
        with pytest.raises(NoRows):
            await gone.run("select_by_id")
    finally:
        await session.ddl([f"DROP DATABASE IF EXISTS {DB}"])
        await session.close()
    return out


def test_study1_ops_on_clickhouse(endpoint: tuple[str, int]) -> None:
    counts = asyncio.run(exercise(endpoint))
    assert counts["loaded"] == RECORDS
    assert counts["after_insert"] == RECORDS + 20
    assert RECORDS <= counts["after_delete"] < RECORDS + 20  # distinct uniform ids: most go
