"""A workload file rendered for one target (scenarios/workloads/target_spec.py): what a
phase spec's ``workload_file`` carries to the agents, per engine: statement text with
the driver's markers, the parameters in marker order, lists, groups and per-member
variants, ClickHouse insert heads and server-side types, the target's DDL; and `check`
prints the same text."""

from __future__ import annotations

import json

from rich.console import Console

from loadtower.scenarios.models import Target, Workload
from loadtower.scenarios.plan import load_plan
from loadtower.scenarios.workloads.describe import describe
from loadtower.scenarios.workloads.loader import load_workload_text
from loadtower.scenarios.workloads.target_spec import render_for_target

from .test_workload_file_examples import INVENTORY

FILE = """\
load = "put"
[tables.t]
partition_key = ["k"]
clustering_key = ["c"]
[tables.t.columns]
k = "bigint"
c = "int"
price = "int"
"f*" = { type = "text", count = 3 }
[tables.t.cassandra]
types = { price = "float" }
options = { bloom_filter_fp_chance = 0.01 }
[tables.t.clickhouse]
types = { price = "UInt32" }

[ops.put]
batch = 4
key = { gen = "sequence" }
cassandra = "INSERT INTO ${t} (k, c, price, ${f*}) VALUES (:k, :c, :price, :f*)"
clickhouse = "INSERT INTO ${t} (k, c, price, ${f*}) VALUES (:k, :c, :price, :f*)"
bind.k = { gen = "key" }
bind.c = { gen = "int", min = 0, max = 9 }
bind.price = { gen = "key", modulo = 97 }
bind."f*" = { gen = "text", length = 5 }

[ops.get]
weight = 3
expect = "rows"
key = { gen = "uniform" }
cassandra = "SELECT * FROM ${t} WHERE k = :k AND c = :c AND price > :low ALLOW FILTERING"
clickhouse = "SELECT * FROM ${t} WHERE price > :low AND k = :k AND c = :c"
bind.k = { gen = "key" }
bind.c = { gen = "int", min = 0, max = 9 }
bind.low = { gen = "int", min = 0, max = 5 }

[ops.gone]
batch = 3
key = { gen = "uniform" }
cassandra = "DELETE FROM ${t} WHERE k IN :[k] AND c = :c"
clickhouse = "DELETE FROM ${t} WHERE (k, c) IN :[k, c]"
bind.k = { gen = "key" }
bind.c = { gen = "int", min = 0, max = 9 }

[ops.touch]
key = { gen = "uniform" }
cassandra = "UPDATE ${t} SET ${f#} = :v WHERE k = :k AND c = 0"
bind.v = { gen = "text", length = 5 }
bind.k = { gen = "key" }

[ops.both]
weight = 0
steps = ["get", "touch"]
"""


def spec_of(engine: str, target: Target | None = None, workload: Workload | None = None):
    checked = load_workload_text(FILE, "w.toml")
    return render_for_target(checked, workload or Workload(file="w.toml"), engine,
                             target or Target(keyspace="ks"))


def test_cql_markers_in_order_with_groups_lists_and_variants() -> None:
    spec = spec_of("scylla")
    assert spec["engine"] == "cassandra" and spec["load"] == "put"
    run = spec["run"]
    put = run["put"]["statements"]
    assert put == [{"text": "INSERT INTO ks.t (k, c, price, f0, f1, f2) VALUES (?, ?, ?, ?, ?, ?)",
                    "binds": ["k", "c", "price", "f0", "f1", "f2"], "insert_rows": False,
                    "types": {"k": "bigint", "c": "int", "price": "float", "f0": "text",
                              "f1": "text", "f2": "text"}}]
    assert run["put"]["batch"] == 4
    get = run["get"]["statements"][0]
    assert get["binds"] == ["k", "c", "low"] and get["text"].count("?") == 3
    assert run["get"]["expect"] == "rows" and run["get"]["weight"] == 3.0
    gone = run["gone"]["statements"][0]
    assert gone["text"] == "DELETE FROM ks.t WHERE k IN ? AND c = ?"
    assert gone["binds"] == [["k"], "c"]
    touch = [s["text"] for s in run["touch"]["statements"]]  # one statement per member
    assert touch == [f"UPDATE ks.t SET f{i} = ? WHERE k = ? AND c = 0" for i in range(3)]
    assert run["both"] == {"steps": ["get", "touch"], "weight": 0.0, "batch": 1, "expect": "any"}


def test_clickhouse_heads_named_types_and_tuple_lists() -> None:
    spec = spec_of("clickhouse")
    run = spec["run"]
    put = run["put"]["statements"][0]
    assert put["text"] == "INSERT INTO ks.t (k, c, price, ${f*})".replace(
        "${f*}", "f0, f1, f2") and put["insert_rows"] is True
    assert put["binds"] == ["k", "c", "price", "f0", "f1", "f2"]
    get = run["get"]["statements"][0]
    assert get["text"] == ("SELECT * FROM ks.t WHERE price > {low:UInt32} AND k = {k:Int64} "
                           "AND c = {c:Int32}")
    assert get["binds"] == ["low", "k", "c"]
    gone = run["gone"]["statements"][0]
    assert gone["text"] == "DELETE FROM ks.t WHERE (k, c) IN {k_c:Array(Tuple(Int64, Int32))}"
    assert gone["binds"] == [["k", "c"]]
    # touch has no ClickHouse statement: it does not run there, nor do steps using it
    assert "touch" not in run and "both" not in run


def test_the_targets_ddl_keyspace_rename_and_clickhouse_overrides() -> None:
    cql = spec_of("cassandra", Target(keyspace="ks2", replication_factor=3),
                  Workload(file="w.toml", table="renamed"))
    assert cql["ddl"][0] == ("CREATE KEYSPACE IF NOT EXISTS ks2 WITH replication = "
                             "{'class': 'SimpleStrategy', 'replication_factor': 3}")
    assert cql["ddl"][1].startswith("CREATE TABLE IF NOT EXISTS ks2.renamed (k bigint, c int, "
                                    "price float, f0 text")
    assert cql["ddl"][2] == "ALTER TABLE ks2.renamed WITH bloom_filter_fp_chance = 0.01"
    assert cql["tables"] == ["ks2.renamed"]
    assert cql["run"]["get"]["statements"][0]["text"].startswith("SELECT * FROM ks2.renamed ")
    ch = spec_of("clickhouse", Target(keyspace="db", table_engine="ReplacingMergeTree",
                                      order_by=["k"], skip_indexes={"i": "c TYPE minmax"}))
    assert ch["ddl"] == [
        "CREATE DATABASE IF NOT EXISTS db",
        "CREATE TABLE IF NOT EXISTS db.t (k Int64, c Int32, price UInt32, f0 String, "
        "f1 String, f2 String, INDEX i c TYPE minmax) ENGINE = ReplacingMergeTree ORDER BY (k)",
    ]


def test_the_spec_is_plain_json() -> None:
    spec = spec_of("clickhouse")
    assert json.loads(json.dumps(spec)) == spec


STUDY = """\
name = "s"
[target]
keyspace = "lt_s"
[targets.cassandra]
engine = "cassandra"
[targets.clickhouse]
engine = "clickhouse"
[workloads.w]
file = "w.toml"
[[phases]]
type = "load"
"""


def test_check_prints_what_run_sends(write) -> None:
    """One code path: every statement text the agents get is what `check` shows."""
    write("w.toml", FILE)
    plan = load_plan(write("s.toml", STUDY), write("inv.toml", INVENTORY))
    console = Console(width=400, record=True)
    console.print(describe("w", plan.workloads["w"], plan.scenario))
    shown = console.export_text()
    for name in ("cassandra", "clickhouse"):
        sc = plan.scenario.for_target(name)
        spec = render_for_target(plan.workloads["w"], sc.workloads["w"], sc.engine, sc.target)
        for line in spec["ddl"]:
            assert line in shown, line
        for run in spec["run"].values():
            for statement in run.get("statements", [])[:2]:
                assert statement["text"] in shown, statement["text"]


def test_run_refuses_a_load_op_the_target_cannot_run(write) -> None:
    import pytest

    from loadtower.errors import LoadtowerError
    from loadtower.scenarios.workloads.target_spec import check_runnable

    write("w.toml", FILE.replace('load = "put"', 'load = "touch"'))  # touch: CQL only
    plan = load_plan(write("s.toml", STUDY), write("inv.toml", INVENTORY))
    with pytest.raises(LoadtowerError, match="loaded on a clickhouse target, but its load op "
                       "'touch' has no clickhouse statement"):
        check_runnable(plan)
    write("w.toml", FILE)
    check_runnable(load_plan(write("s.toml", STUDY), write("inv.toml", INVENTORY)))


def test_a_batch_by_engine_is_each_targets_own(write) -> None:
    """`batch = { cassandra = 40, clickhouse = 5000 }`: each target's spec carries its
    engine's rows everywhere an op's batch is read (the run op, the bind spec, the model
    the agents get), and `check` shows both."""
    by_engine = FILE.replace("batch = 4\n", "batch = { cassandra = 40, clickhouse = 5000 }\n", 1)
    checked = load_workload_text(by_engine, "w.toml")
    for engine, rows in (("scylla", 40), ("clickhouse", 5000)):
        spec = render_for_target(checked, Workload(file="w.toml"), engine, Target(keyspace="ks"))
        assert spec["run"]["put"]["batch"] == rows
        assert spec["ops"]["put"]["batch"] == rows
        assert spec["model"]["ops"]["put"]["batch"] == rows
        assert spec["run"]["gone"]["batch"] == 3  # a plain number is every engine's
        assert json.loads(json.dumps(spec)) == spec
    write("w.toml", by_engine)
    plan = load_plan(write("s.toml", STUDY), write("inv.toml", INVENTORY))
    console = Console(width=400, record=True)
    console.print(describe("w", plan.workloads["w"], plan.scenario))
    assert "x40 rows on cassandra, x5000 on clickhouse" in console.export_text()
