"""A built-in workload (a preset, ``schema``, ``mix``) resolves to its schema's shipped
workload file, with the scenario's settings as the file's variables and its mix as the
ops' weights; the phase spec carries the rendered file exactly as for a user's file, and
what it renders is what the engines' own code made (tests/scenarios/builtin_reference.py)."""

from __future__ import annotations

import re

import pytest

from loadtower.errors import ConfigError
from loadtower.scenarios.loader import load_scenario
from loadtower.scenarios.plan import load_plan
from loadtower.scenarios.workloads.scenario_files import load_scenario_workloads
from loadtower.scenarios.workloads.target_spec import (
    phase_workload_file,
    render_for_target,
)
from tests.scenarios import builtin_reference as ref

from .conftest import INVENTORY

_CH_PARAM = re.compile(r"\{[A-Za-z_][A-Za-z0-9_]*:")


def scenario(workload: str, target: str = "", dataset: str = "") -> str:
    return f"""\
name = "s"
{target}
[dataset]
records = 500
fields = 3
field_size = 20
{dataset}
[workloads.w]
{workload}
[[phases]]
type = "load"
[[phases]]
type = "run"
duration = "1s"
rate = 10
"""


def plan_of(write, text: str):
    return load_plan(write("s.toml", text), write("inv.toml", INVENTORY))


def workloads_of(write, text: str):
    """The scenario and its checked workloads, without an inventory of its engine."""
    path = write("s.toml", text)
    sc, source = load_scenario(path)
    return sc, load_scenario_workloads(sc, path, source)


def test_a_preset_runs_its_schemas_file_with_the_scenarios_values(write) -> None:
    plan = plan_of(write, scenario('preset = "ycsb-e"\nscan_length = 7\nbatch_size = 9'))
    model = plan.workloads["w"].model
    assert plan.workloads["w"].file.endswith("ycsb.toml")
    assert {n: o.weight for n, o in model.ops.items() if o.weight} == {"scan": 95, "insert": 5}
    assert model.vars["fields"] == 3 and model.vars["field_size"] == 20
    assert model.vars["scan_length"] == 7 and model.vars["batch_size"] == 9
    assert model.ops["scan"].key is not None and model.ops["scan"].key.gen == "zipfian"
    assert model.ops["scan"].bind["length"].max == 7
    spec = phase_workload_file(plan, "w")
    assert spec is not None and spec["engine"] == "cassandra"
    assert spec["load"] == "insert"
    assert {op for op, run in spec["run"].items() if run["weight"] > 0} == {"scan", "insert"}
    assert "update_mutation" not in spec["run"]  # never under its own name


def test_hotspot_fractions_and_the_distribution_reach_the_key_draws(write) -> None:
    text = scenario('schema = "recipes"\nmix = { read = 1 }\ndistribution = "hotspot"\n'
                    "hotspot_data_fraction = 0.1\nhotspot_op_fraction = 0.9")
    key = plan_of(write, text).workloads["w"].model.ops["read"].key
    assert key is not None and (key.gen, key.hot_data, key.hot_ops) == ("hotspot", 0.1, 0.9)


@pytest.mark.parametrize("schema", ["ycsb", "recipes", "ttl"])
def test_the_cql_target_gets_the_engines_ddl_and_statements(write, schema) -> None:
    target = '[target]\nkeyspace = "KsX"\ntable = "Odd_T"\nreplication_factor = 3'
    extra = "ttl = \"90s\"\nbloom_filter_fp_chance = 0.2" if schema != "recipes" else (
        "bloom_filter_fp_chance = 0.2")
    plan = plan_of(write, scenario(f'schema = "{schema}"\nmix = {{ read = 1 }}\n{extra}', target))
    spec = phase_workload_file(plan, "w")
    assert spec is not None
    ttl = 90 if schema == "ttl" else None
    assert spec["ddl"] == ref.cql_ddl(schema, "KsX", "Odd_T", 3, 3, ttl, 0.2)
    theirs = ref.cql_statements(schema, "KsX", "Odd_T", 3)
    assert spec["run"]["read"]["statements"][0]["text"] == theirs["read"]
    assert spec["run"]["insert"]["statements"][0]["text"] == theirs["insert"]


CH_TARGET = """\
engine = "clickhouse"
[target]
keyspace = "db"
update_mode = "mutation"
delete_mode = "mutation"
"""


@pytest.mark.parametrize("schema", ["ycsb", "recipes", "ttl"])
def test_clickhouse_update_mode_mutation_runs_the_files_update_mutation(write, schema) -> None:
    sc, workloads = workloads_of(write, scenario(
        f'schema = "{schema}"\nmix = {{ read = 1, update = 1 }}', CH_TARGET))
    checked = workloads["w"]
    spec = render_for_target(checked, sc.workloads["w"], "clickhouse", sc.target)
    theirs = ref.clickhouse_statements(schema, "db", ref.default_table(schema), 3,
                                       update_mode="mutation")
    mine = [s["text"] for s in spec["run"]["update"]["statements"]]
    expected = ([theirs[f"update{i}"] for i in range(3)] if schema == "ycsb"
                else [theirs["update"]])
    assert [_CH_PARAM.sub("{:", t) for t in mine] == [_CH_PARAM.sub("{:", t) for t in expected]
    assert spec["run"]["update"]["weight"] == 1 and "update_mutation" not in spec["run"]
    # read_modify_write's update step is the mutation too (steps name the op)
    assert spec["run"]["read_modify_write"]["steps"] == ["read", "update"]


def test_a_mix_op_the_schema_lacks_is_one_line(write) -> None:
    with pytest.raises(ConfigError) as err:
        plan_of(write, scenario('schema = "ttl"\nmix = { read = 1, delete = 1 }'))
    assert "delete" in str(err.value)


def test_a_builtin_on_mongodb_runs_its_files_mongodb_slots(write) -> None:
    target = 'engine = "mongodb"\n[target]\nkeyspace = "db"'
    sc, checked = workloads_of(write, scenario('preset = "ycsb-a"\nbatch_size = 9', target))
    spec = render_for_target(checked["w"], sc.workloads["w"], sc.engine, sc.target)
    assert spec["engine"] == "mongodb" and spec["tables"] == ["usertable"]
    assert spec["ddl"] == ["create usertable"]
    assert spec["load"] == "insert_batch"  # blocks of batch_size, as the engine's code had it
    assert spec["run"]["insert_batch"]["batch"] == 9
    read = spec["run"]["read"]["statements"][0]["call"]
    assert (read["call"], read["collection"]) == ("find_one", "usertable")
    assert {op for op, run in spec["run"].items() if run["weight"] > 0} == {"read", "update"}


def test_the_standalone_load_sends_a_presets_shipped_file(write) -> None:
    """`loadtower agent run --workload ycsb-a` (a preset by name) and a scenario file with a
    built-in workload both send the rendered shipped file."""
    import argparse

    from loadtower.orchestrator.standalone_load_command import _spec

    common = dict(engine="cassandra", local_dc=None, tls_ca_file=None, tls_cert_file=None,
                  tls_key_file=None, no_tls_verify_hostname=False)
    args = argparse.Namespace(workload="ycsb-b", ttl=None, keyspace="ks9", consistency="ONE",
                              driver="auto", native_io="rust", records=100, fields=2,
                              field_size=8, **common)
    spec = _spec(args)["workload_file"]
    assert spec["tables"] == ["ks9.usertable"] and spec["load"] == "insert"
    assert {op: r["weight"] for op, r in spec["run"].items() if r["weight"]} == {
        "read": 95, "update": 5}
    assert spec["ops"]["insert"]["bind"]["field*"]["length"] == 8
    path = write("s.toml", scenario('schema = "ttl"\nmix = { read = 1 }\nttl = "5s"'))
    from_file = _spec(argparse.Namespace(workload=str(path), **common))["workload_file"]
    assert "default_time_to_live = 5 " in from_file["ddl"][1]
