"""The Rust core's load of a workload file (engines/cassandra/native/src/{binder,closed}.rs)
against the Python reference (agents/workload/file_ops.py FileOps.load): for a set of
key numbers, the rows the core's load op binds have the reference's keys and key-derived
values byte for byte, the same parameters and types, `batch` rows per op (fewer for the
slice's last block), a `:[...]` list as one statement; and what it refuses in one line.
No database: the core's test hooks."""

from __future__ import annotations

import json
import random
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from loadtower.agents.workload.binder import OpBinder
from loadtower.agents.workload.generators import Context
from loadtower.scenarios.workloads.bind_spec import bind_specs
from loadtower.scenarios.workloads.loader import load_workload_file
from tests.agents.test_rust_binder_units import RENDER_DEFAULTS, comparable, spec_of

core = pytest.importorskip("loadtower_core", reason="the Rust core is not built (no cargo)")

FIRSTS = [0, 1, 999, 123_456, 10**9 + 7, 2**40]


def builtin_ops(name: str) -> dict[str, Any]:
    path = Path(str(resources.files("loadtower.scenarios.builtin.workloads") / name))
    return bind_specs(load_workload_file(path))  # type: ignore[return-value]


def reference(op_name: str, op: dict, first: int, count: int) -> list[dict[str, Any]]:
    binder = OpBinder(op_name, op, Context(random.Random(1), 1000))
    return [binder.row(key=k) for k in range(first, first + count)]


def key_params(op: dict) -> list[str]:
    return [p for p, g in op["bind"].items() if g.get("gen") == "key"]


@pytest.mark.parametrize("first", FIRSTS)
def test_ycsb_insert_load_rows_are_the_references(first: int) -> None:
    """ycsb.toml's insert (10 fields): one row per op, the key of key number `first`
    exactly as the reference renders it, every field text of field_size."""
    ops = builtin_ops("ycsb.toml")
    op = ops["insert"]
    params, rows, statement, batch = core.load_rows(spec_of(ops), "insert", first, 1, 1, 1000)
    assert statement == "insert/0" and batch == 0 and len(rows) == 1
    (ref,) = reference("insert", op, first, 1)
    assert sorted(params) == sorted(ref)
    binds = [p for p in op["types"] if not p.endswith("*")]  # spec_of's marker order
    row = dict(zip(binds, rows[0], strict=True))
    for p in key_params(op):
        assert row[p] == comparable(ref[p], op["types"][p])
        assert row[p].encode() == ref[p].encode()
    assert {type(v) for v in row.values()} == {str}
    assert {len(v) for p, v in row.items() if p not in key_params(op)} == {
        len(v) for p, v in ref.items() if p not in key_params(op)}


@pytest.mark.parametrize(("first", "count"), [(0, 10), (995, 5), (10**7 + 3, 3)])
def test_a_batch_load_binds_each_key_number_once_in_order(first: int, count: int) -> None:
    """An op of batch = 10 as the load sends it: `count` rows (the slice's last block may
    be shorter) of key numbers first .. first + count - 1, keys and key-derived ints and
    timestamps byte-identical to the reference's rows for those key numbers."""
    key = {"gen": "sequence", "first": 0, **RENDER_DEFAULTS}
    op = {"key": key, "batch": 10,
          "bind": {"id": {"gen": "key", **RENDER_DEFAULTS, "prefix": "k", "hash": True},
                   "n": {"gen": "key", **RENDER_DEFAULTS, "modulo": 97},
                   "at": {"gen": "key", **RENDER_DEFAULTS, "start": "2025-01-01T00:00:00Z",
                          "step": 0.5},
                   "v": {"gen": "text", "length": {"min": 1, "max": 40}},
                   "c": {"gen": "choice", "values": ["a", "b"]}},
          "types": {"id": "text", "n": "int", "at": "timestamp", "v": "text", "c": "text"}}
    run = {"put": {"statements": [{"text": "", "binds": ["v", "at", "id", "n", "c"],
                                   "insert_rows": False}], "batch": 10, "weight": 1.0}}
    spec = json.dumps({"ops": {"put": op}, "run": run})
    _params, rows, statement, batch = core.load_rows(spec, "put", first, count, 3, 1000)
    refs = reference("put", op, first, count)
    assert statement == "put/0"
    assert batch == (count if count > 1 else 0) and len(rows) == count
    for row, ref in zip(rows, refs, strict=True):
        v, at, id_, n, c = row
        assert (id_, n, at) == (ref["id"], ref["n"], comparable(ref["at"], "timestamp"))
        assert 1 <= len(v) <= 40 and c in ("a", "b")


def test_a_list_load_is_one_statement_over_the_rows() -> None:
    key = {"gen": "sequence", "first": 0, **RENDER_DEFAULTS}
    op = {"key": key, "bind": {"id": {"gen": "key", **RENDER_DEFAULTS, "prefix": "r"}},
          "types": {"id": "text"}, "batch": 4}
    run = {"get": {"statements": [{"text": "", "binds": [["id"]], "insert_rows": False}],
                   "batch": 4, "weight": 1.0}}
    spec = json.dumps({"ops": {"get": op}, "run": run})
    _params, rows, statement, batch = core.load_rows(spec, "get", 7, 4, 1, 100)
    assert (statement, batch) == ("get/0", 0)
    assert rows == [[["r7", "r8", "r9", "r10"]]]


def test_a_load_op_with_steps_or_absent_is_one_line() -> None:
    ops = builtin_ops("ycsb.toml")
    spec = json.loads(spec_of(ops))
    spec["run"]["rmw"] = {"steps": ["read", "update"], "weight": 1.0}
    with pytest.raises(ValueError, match="^the load op rmw has steps$"):
        core.load_rows(json.dumps(spec), "rmw", 0, 1, 1, 10)
    with pytest.raises(ValueError, match="^the load op nope does not run here$"):
        core.load_rows(json.dumps(spec), "nope", 0, 1, 1, 10)
