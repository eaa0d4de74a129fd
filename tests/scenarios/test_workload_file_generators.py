"""The reference generators (agents/workload/generators.py): deterministic given a
seed, the built-in distributions (keys.chooser: the same draws for the same rng), and
the built-in schemas' keys for the built-in workload files' key bindings."""

from __future__ import annotations

import random
import uuid
from collections import Counter
from datetime import UTC, datetime, timedelta
from importlib import resources
from pathlib import Path

import pytest

from loadtower.agents.workload.binder import OpBinder
from loadtower.agents.workload.generators import Context, generator, render_key
from loadtower.agents.workload.keys import chooser
from loadtower.agents.workload.values import ValuePool
from loadtower.scenarios.workloads.bind_spec import bind_specs
from loadtower.scenarios.workloads.loader import load_workload_file
from tests.scenarios.builtin_reference import Rows

NOW = datetime(2025, 6, 1, 12, 0, tzinfo=UTC)


def ctx(seed: int = 7, records: int = 1000) -> Context:
    return Context(random.Random(seed), records, now=lambda: NOW)


def draws(spec: dict, type_name: str, n: int = 200, seed: int = 7) -> list:
    draw = generator(spec, type_name, ctx(seed))
    return [draw() for _ in range(n)]


@pytest.mark.parametrize(
    ("spec", "type_name"),
    [
        ({"gen": "uniform"}, "bigint"), ({"gen": "zipfian", "keys": 50}, "text"),
        ({"gen": "latest"}, "int"), ({"gen": "hotspot", "hot_data": 0.1}, "bigint"),
        ({"gen": "sequence", "first": 5}, "bigint"), ({"gen": "int", "min": 3, "max": 9}, "int"),
        ({"gen": "float", "min": -1, "max": 1}, "double"),
        ({"gen": "text", "length": {"min": 2, "max": 9, "distribution": "zipfian"}}, "text"),
        ({"gen": "blob", "length": 16}, "blob"), ({"gen": "uuid"}, "uuid"),
        ({"gen": "uuid", "version": 1}, "timeuuid"),
        ({"gen": "timestamp", "from": "2024-01-01T00:00:00Z", "to": "2024-02-01T00:00:00Z"},
         "timestamp"),
        ({"gen": "choice", "values": ["a", "b", "c"], "weights": [1, 0, 3]}, "text"),
    ],
)
def test_the_same_seed_gives_the_same_values(spec, type_name) -> None:
    first, again, other = draws(spec, type_name), draws(spec, type_name), draws(spec, type_name, seed=8)
    assert first == again
    if spec["gen"] not in ("sequence",):
        assert first != other


@pytest.mark.parametrize("distribution", ["uniform", "zipfian", "latest", "hotspot"])
def test_key_draws_are_the_builtin_distributions(distribution) -> None:
    """The same rng gives the same key numbers as the built-in chooser (reused)."""
    mine = draws({"gen": distribution, "keys": 500}, "bigint", 300, seed=3)
    theirs = chooser(distribution, 500, lambda: 999, random.Random(3))  # the newest key
    assert mine == [theirs() for _ in range(300)]


def test_ranges_and_lengths_hold() -> None:
    assert set(draws({"gen": "int", "min": 3, "max": 5}, "int", 300)) == {3, 4, 5}
    floats = draws({"gen": "float", "min": 2.0, "max": 3.0}, "double")
    assert all(2.0 <= f <= 3.0 for f in floats)
    texts = draws({"gen": "text", "length": {"min": 4, "max": 6}}, "text", 300)
    assert {len(t) for t in texts} == {4, 5, 6} and all(t.isalnum() for t in texts)
    assert {len(b) for b in draws({"gen": "blob", "length": 8}, "blob")} == {8}
    assert all(isinstance(b, bytes) for b in draws({"gen": "blob", "length": 8}, "blob"))
    zipf = draws({"gen": "text", "length": {"min": 1, "max": 50, "distribution": "zipfian"}},
                 "text", 2000)
    counts = Counter(len(t) for t in zipf)
    assert counts[1] > counts[25] and min(counts) >= 1 and max(counts) <= 50


def test_uuids_timestamps_and_choices() -> None:
    v4 = draws({"gen": "uuid"}, "uuid")
    assert all(u.version == 4 for u in v4) and len(set(v4)) == len(v4)
    v1 = draws({"gen": "uuid", "version": 1}, "timeuuid", 5)
    assert all(u.version == 1 for u in v1)
    assert {datetime(1582, 10, 15, tzinfo=UTC) + timedelta(microseconds=u.time // 10)
            for u in v1} == {NOW}
    assert draws({"gen": "timestamp"}, "timestamp", 3) == [NOW] * 3
    ranged = draws({"gen": "timestamp", "from": "2024-01-01T00:00:00+00:00",
                    "to": "2024-01-02T00:00:00+00:00"}, "timestamp")
    assert all(datetime(2024, 1, 1, tzinfo=UTC) <= t <= datetime(2024, 1, 2, tzinfo=UTC)
               for t in ranged)
    picked = Counter(draws({"gen": "choice", "values": ["a", "b", "c"], "weights": [1, 0, 3]},
                           "text", 4000))
    assert picked["b"] == 0 and 2.5 < picked["c"] / picked["a"] < 3.5
    assert draws({"gen": "choice", "values": [1, 2]}, "double", 5)[0] in (1.0, 2.0)
    assert isinstance(draws({"gen": "constant", "value": 3}, "float", 1)[0], float)


def test_key_rendering_by_type() -> None:
    assert render_key(7, {"prefix": "user"}, "text") == "user7"
    assert render_key(7, {"modulo": 5}, "float") == 2.0
    assert render_key(7, {"start": "2024-01-01T00:00:00+00:00", "step": 60}, "timestamp") == (
        datetime(2024, 1, 1, 0, 7, tzinfo=UTC))
    assert render_key(7, {}, "uuid") == render_key(7, {"hash": True}, "uuid")


@pytest.mark.parametrize("schema", ["ycsb", "recipes", "ttl"])
def test_builtin_files_bind_the_builtin_keys(schema) -> None:
    """The row key of each built-in file's ops renders to the key the engines' code sent
    (tests/scenarios/builtin_reference.py)."""
    ref = resources.files("loadtower.scenarios.builtin.workloads") / f"{schema}.toml"
    checked = load_workload_file(Path(str(ref)))
    specs = bind_specs(checked)
    ops = Rows(schema, ValuePool(random.Random(1)), 10, 10)
    context = ctx()
    for op in ("read", "insert"):
        binder = OpBinder(op, specs[op], context)
        for _ in range(20):
            row = binder.row()
            expected = ops.where(binder.key())
            key_params = {"ycsb": ["y_id"], "recipes": ["total_price", "id"], "ttl": ["id"]}
            assert tuple(row[p] for p in key_params[schema]) == expected


def test_binder_shares_the_row_key_and_records_written_values() -> None:
    context = ctx()
    put = OpBinder("put", {"key": {"gen": "sequence"}, "types": {"a": "text", "b": "bigint"},
                           "bind": {"a": {"gen": "key", "prefix": "k"}, "b": {"gen": "key"}}},
                   context)
    get = OpBinder("get", {"types": {"a": "text"},
                           "bind": {"a": {"gen": "written", "from": "put.a", "window": 3}}},
                   context)
    rows = [put.row() for _ in range(5)]
    assert [(r["a"], r["b"]) for r in rows] == [(f"k{i}", i) for i in range(5)]
    assert {get.row()["a"] for _ in range(100)} == {"k2", "k3", "k4"}


def test_written_before_any_write_uses_the_source() -> None:
    get = OpBinder("get", {"types": {"a": "text"},
                           "bind": {"a": {"gen": "written", "from": "put.a"}}},
                   ctx(), source=lambda op, param: f"{op}.{param}")
    assert get.row() == {"a": "put.a"}


def test_data_set_columns_come_row_after_row() -> None:
    context = Context(random.Random(1), 10,
                      datasets={"people": iter([{"name": "ann"}, {"name": "bob"}])})
    draw = generator({"gen": "dataset", "column": "name"}, "text", context)
    assert [draw(), draw()] == ["ann", "bob"]
    missing = generator({"gen": "dataset", "column": "x", "dataset": "other"}, "text", context)
    with pytest.raises(LookupError):
        missing()
    assert uuid  # (imported for the uuid checks above)


def test_steps_share_the_first_steps_key() -> None:
    from loadtower.agents.workload.binder import step_rows

    context = ctx()
    spec = {"key": {"gen": "uniform", "keys": 10**9}, "types": {"k": "bigint"},
            "bind": {"k": {"gen": "key"}}}
    read, update = OpBinder("read", spec, context), OpBinder("update", spec, context)
    for _ in range(20):
        first, second = step_rows([read, update])
        assert first == second and read.key() == update.key()
    assert len({read.row()["k"] for _ in range(20)}) > 1  # alone, each draws its own
