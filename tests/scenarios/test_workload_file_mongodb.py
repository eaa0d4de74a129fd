"""A workload file's mongodb slot rendered for a MongoDB target
(engines/mongodb/orchestrator/workload.py): each call with its parameters' marks in bind
order and their portable types, column groups (``"${g*}" = ":g*"``, ``${g#}``: one call
per member), the collection's name (the workload's table rename), sort and limit, the
DDL (collections and indexes); the checks' lines for a bad slot; `check` prints what
the agents get; and the agent's compiled templates (engines/mongodb/agent/file_runner.py) put
BSON-friendly values in place."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, date, datetime

import pytest
from rich.console import Console

from loadtower.engines.mongodb.agent.file_runner import Call, compile_template
from loadtower.errors import ConfigError
from loadtower.protocol.workload_file_spec import PARAM_MARK
from loadtower.scenarios.models import Target, Workload
from loadtower.scenarios.plan import load_plan
from loadtower.scenarios.workloads.describe import describe
from loadtower.scenarios.workloads.loader import load_workload_text
from loadtower.scenarios.workloads.target_spec import render_for_target, runnable

FILE = """\
load = "put"
[tables.t]
partition_key = ["k"]
clustering_key = ["c"]
[tables.t.columns]
k = "bigint"
c = "int"
id = "uuid"
ts = "timestamp"
"f*" = { type = "text", count = 3 }
[tables.t.mongodb]
indexes = [{ k = 1, c = -1 }]

[ops.put]
batch = 4
key = { gen = "sequence" }
mongodb = { call = "insert_one", collection = "${t}", document = { _id = ":id", k = ":k", c = ":c", ts = ":ts", "${f*}" = ":f*" } }
bind.id = { gen = "key" }
bind.k = { gen = "key" }
bind.c = { gen = "int", min = 0, max = 9 }
bind.ts = { gen = "timestamp" }
bind."f*" = { gen = "text", length = 5 }

[ops.get]
weight = 3
expect = "rows"
key = { gen = "uniform" }
mongodb = { call = "find", collection = "${t}", filter = { k = ":k", ts = { "$gte" = ":since" } }, sort = { c = -1 }, limit = ":n" }
bind.k = { gen = "key" }
bind.since = { gen = "timestamp" }
bind.n = { gen = "int", min = 1, max = 5 }

[ops.touch]
key = { gen = "uniform" }
mongodb = { call = "update_one", collection = "t", filter = { k = ":k" }, update = { "$set" = { "${f#}" = ":v" } } }
bind.v = { gen = "text", length = 5 }
bind.k = { gen = "key" }

[ops.sum]
key = { gen = "uniform" }
mongodb = { call = "aggregate", collection = "${t}", pipeline = [{ "$match" = { k = ":k" } }, { "$group" = { _id = "$c", n = { "$sum" = "$${f#}" } } }] }
bind.k = { gen = "key" }
"""


def spec_of(workload: Workload | None = None):  # noqa: ANN201
    checked = load_workload_text(FILE, "w.toml")
    return render_for_target(checked, workload or Workload(file="w.toml"), "mongodb",
                             Target(keyspace="db"))


def mark(name: str) -> dict[str, str]:
    return {PARAM_MARK: name}


def test_calls_with_marks_groups_and_types() -> None:
    spec = runnable(spec_of(), "s.toml", "w")  # mongodb runs: no refusal
    assert spec["engine"] == "mongodb" and spec["load"] == "put"
    assert spec["ddl"] == ["create t", 'index t {"k":1,"c":-1}'] and spec["tables"] == ["t"]
    put = spec["run"]["put"]
    assert put["batch"] == 4 and len(put["statements"]) == 1
    s = put["statements"][0]
    assert s["call"] == {"call": "insert_one", "collection": "t", "document": {
        "_id": mark("id"), "k": mark("k"), "c": mark("c"), "ts": mark("ts"),
        "f0": mark("f0"), "f1": mark("f1"), "f2": mark("f2")}}
    assert s["binds"] == ["id", "k", "c", "ts", "f0", "f1", "f2"] and s["insert_rows"] is True
    assert s["types"] == {"id": "uuid", "k": "bigint", "c": "int", "ts": "timestamp",
                          "f0": "text", "f1": "text", "f2": "text"}
    assert s["text"] == ('db.t.insert_one({"_id": :id, "k": :k, "c": :c, "ts": :ts, '
                         '"f0": :f0, "f1": :f1, "f2": :f2})')
    get = spec["run"]["get"]["statements"][0]
    assert get["call"] == {"call": "find", "collection": "t", "filter": {
        "k": mark("k"), "ts": {"$gte": mark("since")}}, "sort": [["c", -1]], "limit": mark("n")}
    assert get["types"] == {"k": "bigint", "since": "timestamp", "n": "int"}  # since: as ts
    assert get["text"] == 'db.t.find({"k": :k, "ts": {"$gte": :since}}).sort({"c": -1}).limit(:n)'
    assert spec["run"]["get"]["expect"] == "rows" and spec["run"]["get"]["weight"] == 3.0
    touch = [s["call"]["update"] for s in spec["run"]["touch"]["statements"]]
    assert touch == [{"$set": {f"f{i}": mark("v")}} for i in range(3)]  # a call per member
    sums = [s["call"]["pipeline"][1] for s in spec["run"]["sum"]["statements"]]
    assert sums == [{"$group": {"_id": "$c", "n": {"$sum": f"$f{i}"}}} for i in range(3)]
    assert json.loads(json.dumps(spec)) == spec


def test_the_workloads_table_renames_the_collection() -> None:
    spec = spec_of(Workload(file="w.toml", table="other"))
    assert spec["ddl"][0] == "create other" and spec["tables"] == ["other"]
    assert {s["call"]["collection"] for r in spec["run"].values()
            for s in r["statements"]} == {"other"}


@pytest.mark.parametrize(("old", "new", "problem"), [
    ('"${f#}" = ":v"', '"${g#}" = ":v"',
     r"\$\{g#\} is not a table \(t\), keyspace or a column group of the op's table \(f\*\)"),
    ('"${f*}" = ":f*" }', 'fs = ":f*" }', r':f\* goes under the key "\$\{f\*\}"'),
    ('[ops.get]\nweight = 3', '[ops.get]\nbatch = 2\nweight = 3',
     "a batch op's mongodb call must write .*: find binds one row"),
    ('limit = ":n" }', 'limit = ":m" }', "parameter :m has no binding"),
])
def test_a_bad_slot_is_one_line(old: str, new: str, problem: str) -> None:
    assert old in FILE
    with pytest.raises(ConfigError, match=problem) as info:
        load_workload_text(FILE.replace(old, new), "w.toml")
    assert str(info.value).startswith("w.toml:") and "\n" not in str(info.value)


INVENTORY = """\
[ssh]
user = "root"
key = "/tmp/key"
known_hosts = "/tmp/known_hosts"

[hosts.m1]
address = "127.0.0.2"
roles = ["db"]
engine = "mongodb"

[hosts.agent1]
address = "127.0.0.3"
roles = ["agent"]
"""

SCENARIO = """\
name = "s"
engine = "mongodb"
[target]
keyspace = "lt_s"
[workloads.w]
file = "w.toml"
[[phases]]
type = "load"
"""


def test_check_prints_what_run_sends(write) -> None:  # noqa: ANN001
    write("w.toml", FILE)
    plan = load_plan(write("s.toml", SCENARIO), write("inv.toml", INVENTORY))
    console = Console(width=400, record=True)
    console.print(describe("w", plan.workloads["w"], plan.scenario))
    shown = console.export_text()
    sc = plan.scenario
    spec = render_for_target(plan.workloads["w"], sc.workloads["w"], sc.engine, sc.target)
    assert spec["ddl"] and spec["run"]
    for line in spec["ddl"]:
        assert line in shown, line
    for run in spec["run"].values():
        for statement in run.get("statements", [])[:2]:
            assert statement["text"] in shown, statement["text"]


def test_templates_take_bson_values_and_are_fresh_per_row() -> None:
    types = {"u": "uuid", "d": "date", "x": "double", "n": "int", "b": "blob"}
    build = compile_template({"_id": mark("u"), "d": mark("d"), "x": {"$inc": mark("x")},
                              "l": [mark("n"), "const"], "b": mark("b")}, types)
    u = uuid.UUID(int=7)
    row = {"u": u, "d": date(2024, 2, 3), "x": 3, "n": 4.0, "b": bytearray(b"ab")}
    first, second = build(row), build(row)
    assert first["_id"].subtype == 4 and first["_id"].as_uuid() == u
    assert first["d"] == datetime(2024, 2, 3, tzinfo=UTC)
    assert first["x"] == {"$inc": 3.0} and isinstance(first["x"]["$inc"], float)
    assert first["l"] == [4, "const"] and isinstance(first["l"][0], int)
    assert first["b"] == b"ab" and isinstance(first["b"], bytes)
    assert first == second and first is not second and first["x"] is not second["x"]


def test_a_batch_of_a_read_is_refused_by_the_agent_too() -> None:
    call = Call({"call": "find_one", "collection": "t", "filter": {"k": mark("k")}}, {})
    with pytest.raises(ValueError, match="a batch of find_one"):
        call.requests([{"k": 1}, {"k": 2}])


def test_a_ycsb_property_file_runs_on_mongodb_too(tmp_path) -> None:  # noqa: ANN001
    """writeallfields: the update sets every field; a renamed table is the collection."""
    from loadtower.scenarios.workloads.loader import load_workload_file

    path = tmp_path / "workloadw"
    path.write_text("table=things\nfieldcount=2\nreadproportion=0.5\nupdateproportion=0.5\n"
                    "writeallfields=true\n")
    spec = render_for_target(load_workload_file(path), Workload(file=str(path)), "mongodb",
                             Target(keyspace="db"))
    assert spec["ddl"] == ["create things"]
    update = spec["run"]["update"]["statements"]
    assert [s["call"] for s in update] == [{
        "call": "update_one", "collection": "things", "filter": {"_id": mark("y_id")},
        "update": {"$set": {"field0": mark("field0"), "field1": mark("field1")}}}]
    assert spec["run"]["read"]["statements"][0]["call"]["collection"] == "things"
