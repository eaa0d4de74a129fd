"""A data set loaded into real ClickHouse SQL (chdb over HTTP, as the sandbox's
ClickHouse host) by the agents' own path: a CSV with a column of every kind, rendered
for a ClickHouse target, loaded by two workers' slices (agents/workload/dataset_feed.py)
through the executor's load op (inserts of 250 rows): every row once, with the file's
values; then a run-phase read whose key is drawn from the data set finds its row."""

from __future__ import annotations

import asyncio
import random
import uuid
from collections.abc import Iterator
from datetime import date, datetime
from pathlib import Path

import clickhouse_connect
import pytest

from loadtower.agents.workload.dataset_feed import dataset_rows, load_dataset, worker_datasets
from loadtower.agents.workload.file_ops import FileOps
from loadtower.agents.workload.generators import Context
from loadtower.agents.workload.keys import load_slice
from loadtower.engines.clickhouse.agent.file_runner import ClickhouseFileRunner
from loadtower.engines.clickhouse.agent.session import ClickhouseSession
from loadtower.engines.clickhouse.sandbox.chdb_server import chdb_server
from loadtower.scenarios.models import Target, Workload
from loadtower.scenarios.workloads.loader import load_workload_file
from loadtower.scenarios.workloads.target_spec import render_for_target

pytestmark = [pytest.mark.integration, pytest.mark.timeout(180)]  # chdb, as its siblings

PASSWORD = "secret"
DB = "lt_wd_ch"
ROWS = 5003
WORKLOAD = """\
load = "insert"

[datasets.things]
file = "things.csv"
columns = { id = "bigint", name = "text", ok = "boolean", score = "double", uid = "uuid", at = "timestamp", day = "date" }

[tables.things]
partition_key = ["id"]
columns = { id = "bigint", name = "text", ok = "boolean", score = "double", uid = "uuid", at = "timestamp", day = "date" }

[ops.insert]
batch = 250
clickhouse = "INSERT INTO ${things} (id, name, ok, score, uid, at, day) VALUES (:id, :name, :ok, :score, :uid, :at, :day)"
bind.id = { gen = "dataset", column = "id" }
bind.name = { gen = "dataset", column = "name" }
bind.ok = { gen = "dataset", column = "ok" }
bind.score = { gen = "dataset", column = "score" }
bind.uid = { gen = "dataset", column = "uid" }
bind.at = { gen = "dataset", column = "at" }
bind.day = { gen = "dataset", column = "day" }

[ops.get]
weight = 1
expect = "rows"
clickhouse = "SELECT name FROM ${things} WHERE id = :id AND name = :name"
bind.id = { gen = "dataset", column = "id" }
bind.name = { gen = "dataset", column = "name" }
"""


def _row(i: int) -> str:
    return (f"{i},\"name, {i}\",{'true' if i % 3 else 'false'},{i / 4},"
            f"{uuid.UUID(int=i * 7919)},2025-03-0{1 + i % 9}T10:00:{i % 60:02d}Z,"
            f"2024-12-{1 + i % 28:02d}\n")


@pytest.fixture(scope="module")
def endpoint() -> Iterator[tuple[str, int]]:
    with chdb_server(user="default", password=PASSWORD) as address:
        yield address


async def exercise(endpoint: tuple[str, int], tmp_path: Path) -> tuple[list, list, int]:
    (tmp_path / "things.csv").write_text(
        "id,name,ok,score,uid,at,day\n" + "".join(_row(i) for i in range(ROWS)))
    workload = tmp_path / "things.toml"
    workload.write_text(WORKLOAD)
    checked = load_workload_file(workload)
    spec = render_for_target(checked, Workload(file=str(workload)), "clickhouse",
                             Target(keyspace=DB))
    assert load_dataset(spec) == "things" and dataset_rows(spec, "things") == ROWS
    session = ClickhouseSession(threads=2)
    host, port = endpoint
    await session.connect([host], port, "default", PASSWORD, "ONE", database=DB)
    try:
        await session.ddl([f"DROP DATABASE IF EXISTS {DB}", *spec["ddl"]])
        runner = ClickhouseFileRunner(session, spec["tables"])
        for worker in range(2):  # two workers, each its slice, as the engine runs them
            first, end = load_slice(0, ROWS, worker, 2)
            ctx = Context(random.Random(worker), ROWS,
                          datasets=worker_datasets(spec, worker, 2, ("things", first, end)))
            ops = FileOps(spec, runner, ctx)
            await runner.prepare(ops.statements())
            rows = ops.load_rows(100)
            for k in range(first, end, rows):
                await ops.load(k, min(rows, end - k))
        client = clickhouse_connect.get_client(host=host, port=port, username="default",
                                               password=PASSWORD)
        try:
            stored = client.query(
                f"SELECT count(), uniqExact(id), sum(id) FROM {DB}.things").result_rows
            sample = client.query(
                f"SELECT id, name, ok, score, uid, at, day FROM {DB}.things "
                "WHERE id IN (0, 4241) ORDER BY id").result_rows
        finally:
            client.close()
        reads = FileOps(spec, runner, Context(random.Random(9), ROWS,
                                              datasets=worker_datasets(spec, 1, 2)))
        for _ in range(50):  # each read's id and name come from one file row: found
            await reads.run("get")
        return list(stored), list(sample), 50
    finally:
        await session.ddl([f"DROP DATABASE IF EXISTS {DB}"])
        await session.close()


def test_a_data_set_loads_into_clickhouse_once_with_its_values(endpoint, tmp_path) -> None:
    stored, sample, reads = asyncio.run(exercise(endpoint, tmp_path))
    assert stored[0] == (ROWS, ROWS, ROWS * (ROWS - 1) // 2)
    first, other = sample
    assert first[:5] == (0, "name, 0", False, 0.0, uuid.UUID(int=0))
    assert other[:5] == (4241, "name, 4241", True, 4241 / 4, uuid.UUID(int=4241 * 7919))
    assert other[5].replace(tzinfo=None) == datetime(2025, 3, 1 + 4241 % 9, 10, 0, 4241 % 60)
    assert other[6] == date(2024, 12, 1 + 4241 % 28)
    assert reads == 50
