"""The Rust core's binder for workload files (engines/cassandra/native/src/{binder,
generators}.rs) against the Python reference (agents/workload/generators.py): key
renderings byte-identical over thousands of key numbers, every generator's range, length
and type, determinism per seed, batches, `:[...]` lists, steps, `written`, and what the
core refuses (a data set) in one line. No database: the core's test hooks."""

from __future__ import annotations

import json
import random
import uuid
from collections import Counter
from datetime import UTC, datetime, timedelta
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from loadtower.agents.workload.binder import OpBinder
from loadtower.agents.workload.generators import Context, render_key
from loadtower.scenarios.workloads.bind_spec import bind_specs
from loadtower.scenarios.workloads.loader import load_workload_file

core = pytest.importorskip("loadtower_core", reason="the Rust core is not built (no cargo)")

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
RENDER_DEFAULTS = {"prefix": "", "hash": False, "start": "2024-01-01T00:00:00+00:00",
                   "step": 1.0}
KEY_NUMBERS = list(range(3000)) + random.Random(5).sample(range(10**12), 2000) + [2**40, 2**53]


def comparable(value: Any, type_name: str) -> Any:
    """A reference value as the core's hook returns it (uuid str, timestamp ms)."""
    if isinstance(value, uuid.UUID):
        return str(value)
    if isinstance(value, datetime):
        return (value - EPOCH) // timedelta(milliseconds=1)
    if type_name == "float" and isinstance(value, float):
        return float(np.float32(value))
    return value


RENDERINGS = [
    ({"prefix": "user", "hash": True}, "text"),
    ({"prefix": "k"}, "text"),
    ({}, "text"),
    ({"prefix": "a", "modulo": 997}, "ascii"),
    ({"hash": True, "modulo": 1_000_003}, "text"),
    ({}, "bigint"),
    ({"modulo": 997}, "int"),
    ({"modulo": 100}, "smallint"),
    ({"modulo": 100}, "tinyint"),
    ({"hash": True, "modulo": 10**12}, "bigint"),
    ({"modulo": 997}, "float"),
    ({}, "double"),
    ({}, "uuid"),
    ({}, "timeuuid"),
    ({}, "timestamp"),
    ({"start": "2025-01-01T00:00:00Z", "step": 0.25}, "timestamp"),
    ({"start": "2023-06-15T12:30:00.123456+02:00", "step": 60.0}, "timestamp"),
    ({"start": "2024-02-29", "step": 0.001, "modulo": 86_400_000}, "timestamp"),
]


@pytest.mark.parametrize(("fields", "type_name"), RENDERINGS)
def test_key_rendering_is_byte_identical_to_the_reference(fields: dict, type_name: str) -> None:
    spec = {"gen": "key", **RENDER_DEFAULTS, **fields}
    ks = [k for k in KEY_NUMBERS if type_name != "timestamp" or k < 10**9]
    rust = core.render_keys(json.dumps(spec), type_name, ks)
    python = [comparable(render_key(k, spec, type_name), type_name) for k in ks]
    assert rust == python
    if type_name in ("text", "ascii"):  # byte-identical, not only equal as Python strings
        assert [r.encode() for r in rust] == [p.encode() for p in python]


def test_a_key_rendered_as_a_blob_is_refused() -> None:
    with pytest.raises(ValueError, match="a key number rendered as Blob"):
        core.render_keys(json.dumps({"gen": "key"}), "blob", [1])


# -- whole ops: a spec as the phase spec carries it (ops + run) --------------------------
def spec_of(ops: dict[str, dict], run: dict[str, dict] | None = None) -> str:
    """ops: name -> {key, bind, types[, groups, batch]}; each op's one statement binds its
    parameters in order unless `run` says otherwise."""
    if run is None:
        run = {name: {"statements": [{"text": "", "binds": [p for p in op["types"]
                                                            if not p.endswith("*")],
                                      "insert_rows": False}],
                      "batch": op.get("batch", 1), "expect": "any", "weight": 1.0}
               for name, op in ops.items()}
    return json.dumps({"ops": ops, "run": run})


def one(gen: dict, type_name: str, key: dict | None = None) -> dict:
    op: dict = {"bind": {"p": gen}, "types": {"p": type_name}}
    if key is not None:
        op["key"] = key
    return op


def values(gen: dict, type_name: str, n: int = 2000, seed: int = 3,
           key: dict | None = None) -> list:
    _, rows = core.bind_rows(spec_of({"op": one(gen, type_name, key)}), "op", n, seed, 1000)
    return [r[0] for r in rows]


def test_ints_floats_and_lengths_stay_in_range() -> None:
    ints = values({"gen": "int", "min": -5, "max": 9}, "int")
    assert set(ints) == set(range(-5, 10))
    assert all(isinstance(v, float) for v in values({"gen": "int", "min": 1, "max": 3}, "double"))
    floats = values({"gen": "float", "min": -40.0, "max": 60.0}, "double")
    assert min(floats) >= -40 and max(floats) <= 60 and max(floats) - min(floats) > 90
    assert {len(t) for t in values({"gen": "text", "length": 100}, "text")} == {100}
    lengths = [len(t) for t in values({"gen": "text", "length": {"min": 3, "max": 9}}, "text")]
    assert set(lengths) == set(range(3, 10))
    zipf = Counter(len(t) for t in values(
        {"gen": "text", "length": {"min": 2, "max": 50, "distribution": "zipfian"}}, "text"))
    assert min(zipf) >= 2 and max(zipf) <= 50 and zipf.most_common(1)[0][0] == 2
    blobs = values({"gen": "blob", "length": 16}, "blob")
    assert all(isinstance(b, bytes) and len(b) == 16 and b.isalnum() for b in blobs)
    assert all(t.isalnum() for t in values({"gen": "text", "length": 40}, "text"))


def test_uuids_choices_constants_and_timestamps() -> None:
    assert {uuid.UUID(u).version for u in values({"gen": "uuid"}, "uuid")} == {4}
    v1 = [uuid.UUID(u) for u in values({"gen": "uuid", "version": 1}, "timeuuid", 50)]
    now_ms = (datetime.now(UTC) - EPOCH) // timedelta(milliseconds=1)
    assert {u.version for u in v1} == {1}
    # its time is now (100 ns ticks since 1582-10-15)
    when = [(u.time - 0x01B21DD213814000) // 10_000 for u in v1]
    assert all(abs(w - now_ms) < 600_000 for w in when)
    picks = Counter(values({"gen": "choice", "values": ["a", "b", "c"], "weights": [1, 0, 3]},
                           "text", 4000))
    assert set(picks) == {"a", "c"} and picks["c"] > 2 * picks["a"]
    assert set(values({"gen": "choice", "values": [1, 2]}, "bigint")) == {1, 2}
    assert set(values({"gen": "constant", "value": 7}, "int", 10)) == {7}
    assert set(values({"gen": "constant", "value": True}, "boolean", 10)) == {True}
    first = datetime(2024, 1, 1, tzinfo=UTC)
    span = values({"gen": "timestamp", "from": "2024-01-01T00:00:00Z",
                   "to": "2024-02-01T00:00:00Z"}, "timestamp")
    lo = (first - EPOCH) // timedelta(milliseconds=1)
    assert all(lo <= t <= lo + 31 * 86_400_000 for t in span)
    nows = values({"gen": "timestamp"}, "timestamp", 10)
    assert all(abs(t - now_ms) < 600_000 for t in nows)
    days = values({"gen": "timestamp", "from": "2024-01-01", "to": "2024-01-10"}, "date")
    assert set(days) <= set(range(19723, 19733)) and len(set(days)) > 5


@pytest.mark.parametrize("distribution", ["uniform", "zipfian", "latest", "hotspot"])
def test_key_draws_stay_in_the_key_space(distribution: str) -> None:
    gen = {"gen": distribution, "keys": 500, "hot_data": 0.2, "hot_ops": 0.8, **RENDER_DEFAULTS}
    drawn = values(gen, "bigint", 5000)
    assert min(drawn) >= 0 and max(drawn) < 1000  # latest: over the data set (records)
    if distribution == "latest":  # the newest key hottest, key 0 never
        assert Counter(drawn).most_common(1)[0][0] == 999 and 0 not in drawn
    if distribution != "latest":
        assert max(drawn) < 500
    seq = values({"gen": "sequence", "first": 5, **RENDER_DEFAULTS}, "bigint", 10)
    assert seq == list(range(5, 15))


def test_the_same_seed_gives_the_same_rows() -> None:
    gens = {"a": {"gen": "text", "length": {"min": 1, "max": 30}}, "b": {"gen": "uuid"},
            "c": {"gen": "zipfian", **RENDER_DEFAULTS}, "d": {"gen": "float"},
            "e": {"gen": "choice", "values": ["x", "y"]}}
    op = {"bind": gens, "types": {"a": "text", "b": "uuid", "c": "text", "d": "double",
                                   "e": "text"}}
    spec = spec_of({"op": op})
    first = core.bind_rows(spec, "op", 500, 11, 1000)
    assert first == core.bind_rows(spec, "op", 500, 11, 1000)
    assert first[1] != core.bind_rows(spec, "op", 500, 12, 1000)[1]


BUILTINS = ["ycsb.toml", "recipes.toml", "ttl.toml"]


@pytest.mark.parametrize("name", BUILTINS)
def test_builtin_files_bind_as_the_reference(name: str) -> None:
    """Every op of the built-in workload files: the same parameters, values of the same
    Python type; the ops keyed by a sequence give the same keys (key numbers 0, 1, ...)."""
    path = Path(str(resources.files("loadtower.scenarios.builtin.workloads") / name))
    ops = bind_specs(load_workload_file(path))
    spec = spec_of(ops)  # type: ignore[arg-type]
    for op_name, op in ops.items():
        params, rows = core.bind_rows(spec, op_name, 200, 1, 1000)
        binder = OpBinder(op_name, op, Context(random.Random(1), 1000))
        reference = [binder.row() for _ in range(200)]
        assert sorted(params) == sorted(reference[0]), op_name
        types = op["types"]
        for row, ref in zip(rows, reference, strict=True):
            mine = {p: type(v) for p, v in zip(params, row, strict=True)}
            assert mine == {p: type(comparable(v, types[p])) for p, v in ref.items()}, op_name
        if op.get("key", {}).get("gen") == "sequence":
            keyed = [p for p in params if op["bind"].get(p, {}).get("gen") == "key"]
            assert keyed
            assert [[r[params.index(p)] for p in keyed] for r in rows] == [
                [comparable(ref[p], types[p]) for p in keyed] for ref in reference]


def test_batches_lists_steps_and_weights() -> None:
    key = {"gen": "sequence", "first": 0, **RENDER_DEFAULTS}
    row = {"key": key, "bind": {"id": {"gen": "key", **RENDER_DEFAULTS, "prefix": "r"},
                                "v": {"gen": "int", "min": 0, "max": 9}},
           "types": {"id": "text", "v": "int"}}
    read = {"key": {"gen": "uniform", **RENDER_DEFAULTS},
            "bind": {"id": {"gen": "key", **RENDER_DEFAULTS, "prefix": "r"}},
            "types": {"id": "text"}}
    ops = {"ins": {**row, "batch": 10}, "many": {**read, "batch": 4}, "read": read,
           "write": row}
    stmt = {"text": "", "insert_rows": False}
    run = {
        "ins": {"statements": [{**stmt, "binds": ["v", "id"]}], "batch": 10, "weight": 1.0},
        "many": {"statements": [{**stmt, "binds": [["id"]]}], "batch": 4, "weight": 1.0},
        "read": {"statements": [{**stmt, "binds": ["id"]}], "weight": 0.0, "expect": "rows"},
        "write": {"statements": [{**stmt, "binds": ["id", "v"]}], "weight": 0.0},
        "rmw": {"steps": ["read", "write"], "weight": 2.0},
    }
    got = core.next_ops(json.dumps({"ops": ops, "run": run}), 400, 9, 1000)
    names = Counter(name for name, _ in got)
    assert set(names) == {"ins", "many", "rmw"}  # weight 0: only as steps
    assert names["rmw"] > names["ins"]
    for name, parts in got:
        if name == "ins":  # an UNLOGGED BATCH of 10 rows
            assert parts == [("ins/0", [], 10)]
        elif name == "many":  # one statement, IN ? with the 4 rows' ids
            ((statement, (ids,), rows),) = parts
            assert statement == "many/0" and rows == 0 and len(ids) == 4
            assert all(i.startswith("r") and int(i[1:]) < 1000 for i in ids)
        else:  # the steps, one key number
            (s1, (k1,), _), (s2, (k2, v), _) = parts
            assert (s1, s2) == ("read/0", "write/0") and k1 == k2 and 0 <= v <= 9
    with pytest.raises(ValueError, match="no op nope"):
        core.bind_rows(json.dumps({"ops": ops, "run": run}), "nope", 1, 1, 10)


def test_written_draws_what_an_earlier_op_bound() -> None:
    ops = {
        "put": {"key": {"gen": "sequence", **RENDER_DEFAULTS},
                "bind": {"id": {"gen": "key", **RENDER_DEFAULTS, "prefix": "w"}},
                "types": {"id": "text"}},
        "get": {"bind": {"id": {"gen": "written", "from": "put.id", "window": 5}},
                "types": {"id": "text"}},
    }
    got = core.next_ops(spec_of(ops), 2000, 4, 1000)
    put: list[str] = []
    for name, ((_, (value,), _),) in got:
        if name == "put":
            put.append(value)
        elif put:  # among the last 5 written
            assert value in put[-5:], (value, put[-5:])
        else:  # nothing written yet: a value put would write
            assert value.startswith("w")
    assert len(put) > 500


def test_a_data_set_or_a_bad_spec_is_one_line() -> None:
    ops = {"op": one({"gen": "dataset", "column": "name", "dataset": "people"}, "text")}
    why = core.Core.file_unsupported(spec_of(ops))
    assert why == 'op op binds p to gen = "dataset" (data sets run on the Python path)'
    assert core.Core.file_unsupported(spec_of({"op": one({"gen": "int"}, "int")})) is None
    bad = core.Core.file_unsupported(spec_of({"op": one({"gen": "uuid"}, "int")}))
    assert bad == "op op: p: gen uuid for a Int parameter"
    missing = {"op": {"bind": {}, "types": {}}}
    run = {"op": {"statements": [{"text": "", "binds": ["x"], "insert_rows": False}]}}
    assert core.Core.file_unsupported(spec_of(missing, run)) == "op op: parameter x has no binding"


def test_ops_keyed_by_one_sequence_share_its_counter() -> None:
    """Two ops inserting new keys from the same first (ycsb's insert and insert_batch)
    never write the same key: one counter per start, in the core as in the reference."""
    key = {"gen": "sequence", "first": 0, **RENDER_DEFAULTS}
    row = {"key": key, "bind": {"id": {"gen": "key", **RENDER_DEFAULTS, "prefix": "s"}},
           "types": {"id": "text"}}
    stmt = {"text": "", "insert_rows": False, "binds": ["id"]}
    run = {"one": {"statements": [stmt], "weight": 1.0},
           "two": {"statements": [stmt], "weight": 1.0}}
    got = core.next_ops(json.dumps({"ops": {"one": row, "two": row}, "run": run}),
                        300, 2, 1000)
    assert {name for name, _ in got} == {"one", "two"}
    assert [values[0] for _, ((_, values, _),) in got] == [f"s{k}" for k in range(300)]
    ctx = Context(random.Random(2), 1000)
    one, many = (OpBinder(n, {**row, "batch": b}, ctx) for n, b in (("one", 1), ("many", 3)))
    drawn = [one.row()["id"] for _ in range(5)] + [many.row()["id"] for _ in range(5)]
    assert drawn == [f"s{k}" for k in range(10)]  # the reference: one counter


def test_a_run_phases_workers_interleave_their_new_keys() -> None:
    """Worker w of W in a run phase counts first + records + w*stride by W*stride, in the
    core as in the reference: all workers' new keys together are dense, no key twice."""
    from loadtower.agents.workload.file_ops import interleaved

    key = {"gen": "sequence", "first": 0, "stride": 2, **RENDER_DEFAULTS}
    row = {"key": key, "bind": {"id": {"gen": "key", **RENDER_DEFAULTS}},
           "types": {"id": "bigint"}}
    stmt = {"text": "", "insert_rows": False, "binds": ["id"]}
    spec = {"ops": {"put": row}, "run": {"put": {"statements": [stmt], "weight": 1.0}}}
    drawn: list[int] = []
    for worker in range(3):
        mine = interleaved(spec, 100, worker, 3)  # type: ignore[arg-type]
        got = core.next_ops(json.dumps(mine), 50, 7, 100)
        keys = [values[0] for _, ((_, values, _),) in got]
        binder = OpBinder("put", mine["ops"]["put"], Context(random.Random(7), 100))
        assert keys == [binder.row()["id"] for _ in range(50)]
        assert keys[:2] == [100 + 2 * worker, 100 + 2 * worker + 6]
        drawn += keys
    assert sorted(drawn) == list(range(100, 400, 2))  # dense by step 2, each once
