"""The agents' executor of workload-file ops (agents/workload/file_ops.py) over a spec
the orchestrator rendered (scenarios/workloads/target_spec.py): rows from the reference
binder mapped onto each engine's markers, batches, lists, expect = "rows", steps, load
key numbers and run-phase sequence keys after the data set.

The runner here records what it would send (the database side runs in
tests/orchestrator/test_workload_files_integration.py)."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest

from loadtower.agents.workload.file_ops import (
    FileOps,
    NoRows,
    bind_value,
    interleaved,
    named,
    positional,
)
from loadtower.agents.workload.generators import Context
from loadtower.engines.cassandra.agent.file_runner import CqlFileRunner, as_floats
from loadtower.scenarios.models import Target, Workload
from loadtower.scenarios.workloads.loader import load_workload_text
from loadtower.scenarios.workloads.target_spec import render_for_target
from tests.scenarios.test_workload_file_target_spec import FILE

ROWS = [{"k": 1, "c": 7}, {"k": 2, "c": 8}]


def spec_of(engine: str) -> Any:
    checked = load_workload_text(FILE, "w.toml")
    return render_for_target(checked, Workload(file="w.toml"), engine, Target(keyspace="ks"))


def test_marker_values_from_rows() -> None:
    assert bind_value("k", ROWS) == 1
    assert bind_value(["k"], ROWS) == [1, 2]
    assert bind_value(["k", "c"], ROWS) == [(1, 7), (2, 8)]
    statement = {"text": "", "binds": ["c", "k"], "insert_rows": False, "types": {}}
    assert positional(statement, ROWS[0]) == (7, 1)
    listed = {"text": "", "binds": [["k", "c"], "c"], "insert_rows": False, "types": {}}
    assert named(listed, ROWS) == {"k_c": [(1, 7), (2, 8)], "c": 7}


def test_ints_become_floats_for_float_columns_only() -> None:
    statement = {"text": "", "binds": ["k", "p"], "insert_rows": False,
                 "types": {"k": "bigint", "p": "float"}}
    out = as_floats(statement, [{"k": 3, "p": 4}])
    assert out == [{"k": 3, "p": 4.0}] and isinstance(out[0]["p"], float)
    assert isinstance(out[0]["k"], int)


class Recorder:
    """What a runner is asked to send; `empty` results for the ops named there."""

    def __init__(self, empty: tuple[str, ...] = ()) -> None:
        self.sent: list[tuple[str, list[dict]]] = []
        self.empty = empty

    async def prepare(self, statements: dict) -> None:
        self.prepared = statements

    async def send(self, name: str, statement: dict, rows: list[dict]) -> list:
        self.sent.append((name, rows))
        return [] if name.split("/")[0] in self.empty else [("row",)]

    def found(self, result: Any) -> bool:
        return bool(result)


def ops_of(engine: str, runner: Recorder, records: int = 100, offset: int = 0) -> FileOps:
    return FileOps(interleaved(spec_of(engine), offset, 0, 1), runner,
                   Context(random.Random(5), records))


def test_batches_variants_and_weights() -> None:
    runner = Recorder()
    ops = ops_of("cassandra", runner)
    assert ops.weights() == {"put": 1.0, "get": 3.0, "gone": 1.0, "touch": 1.0}
    assert set(ops.statements()) == {"put/0", "get/0", "gone/0", "touch/0", "touch/1", "touch/2"}
    asyncio.run(ops.run("put"))
    name, rows = runner.sent[-1]
    assert name == "put/0" and len(rows) == 4  # one op: a batch of 4 rows
    assert [r["k"] for r in rows] == [0, 1, 2, 3]  # sequence keys from first (a load-less run)
    assert all(r["price"] == r["k"] % 97 for r in rows)
    touched = set()
    for _ in range(40):
        asyncio.run(ops.run("touch"))
        touched.add(runner.sent[-1][0])
    assert touched == {"touch/0", "touch/1", "touch/2"}  # a member picked per op


def test_a_read_that_must_find_rows_raises_no_rows() -> None:
    ops = ops_of("cassandra", Recorder(empty=("get",)))
    with pytest.raises(NoRows, match="get found no row"):
        asyncio.run(ops.run("get"))
    asyncio.run(ops_of("cassandra", Recorder(empty=("gone",))).run("gone"))  # any: no error


def test_steps_share_one_key_and_run_in_order() -> None:
    runner = Recorder()
    asyncio.run(ops_of("cassandra", runner).run("both"))
    (first, [get]), (second, [touch]) = runner.sent
    assert first == "get/0" and second.startswith("touch/")
    assert get["k"] == touch["k"]


def test_load_binds_the_given_key_numbers() -> None:
    runner = Recorder()
    ops = ops_of("clickhouse", runner)
    assert ops.load_rows(100) == 4  # the load op's batch
    asyncio.run(ops.load(50, 3))
    name, rows = runner.sent[-1]
    assert name == "put/0" and [r["k"] for r in rows] == [50, 51, 52]


def test_run_phase_sequences_start_after_the_data_set() -> None:
    runner = Recorder()
    asyncio.run(ops_of("cassandra", runner, offset=1000).run("put"))
    assert [r["k"] for r in runner.sent[-1][1]] == [1000, 1001, 1002, 1003]


class CqlSession:
    """The session calls a CQL runner makes (the drivers' own: tests/agents' others)."""

    def __init__(self) -> None:
        self.calls: list[tuple] = []

    def execute(self, name: str, params: tuple) -> tuple:
        self.calls.append(("execute", name, params))
        return params

    def batch(self, name: str, rows: list[tuple]) -> list:
        self.calls.append(("batch", name, rows))
        return rows


def test_cql_runner_one_row_a_batch_and_a_list() -> None:
    spec = spec_of("cassandra")["run"]
    session = CqlSession()
    runner = CqlFileRunner(session)
    put = spec["put"]["statements"][0]
    row = {"k": 1, "c": 2, "price": 3, "f0": "a", "f1": "b", "f2": "c"}
    runner.send("put/0", put, [row])
    runner.send("put/0", put, [row, {**row, "k": 5}])
    runner.send("gone/0", spec["gone"]["statements"][0], ROWS)
    assert session.calls == [
        ("execute", "put/0", (1, 2, 3.0, "a", "b", "c")),
        ("batch", "put/0", [(1, 2, 3.0, "a", "b", "c"), (5, 2, 3.0, "a", "b", "c")]),
        ("execute", "gone/0", ([1, 2], 7)),
    ]
