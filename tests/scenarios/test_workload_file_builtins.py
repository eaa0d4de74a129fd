"""The built-in workload files (scenarios/builtin/workloads/), which the built-in
workloads now run as, make exactly what the engines' own code made before
(tests/scenarios/builtin_reference.py keeps that code): the same DDL and the same
statements (ClickHouse parameter names aside: only their order and types count), for
several field counts, names, replication settings, TTLs and target overrides; so results
stored by earlier runs stay comparable."""

from __future__ import annotations

import re
from importlib import resources
from pathlib import Path

import pytest

from loadtower.engines.cassandra.orchestrator.workload import cql_ddl
from loadtower.engines.clickhouse.agent import schemas as ch
from loadtower.engines.clickhouse.orchestrator.workload import clickhouse_ddl
from loadtower.scenarios.workloads.checks import Checked
from loadtower.scenarios.workloads.loader import load_workload_file
from tests.scenarios import builtin_reference as ref
from tests.scenarios.rendered import engine_names, op_statements

SCHEMAS = ("ycsb", "recipes", "ttl")
_CH_PARAM = re.compile(r"\{[A-Za-z_][A-Za-z0-9_]*:")


def builtin(schema: str, **overrides: int | str) -> Checked:
    ref = resources.files("loadtower.scenarios.builtin.workloads") / f"{schema}.toml"
    return load_workload_file(Path(str(ref)), dict(overrides))


def _vars(schema: str, fields: int, ttl: int) -> dict[str, int | str]:
    return {"fields": fields} if schema == "ycsb" else {"ttl": ttl} if schema == "ttl" else {}


def anonymous(sql: str) -> str:
    """ClickHouse's {name:Type} with the name dropped."""
    return _CH_PARAM.sub("{:", sql)


@pytest.mark.parametrize("schema", SCHEMAS)
@pytest.mark.parametrize("fields", [1, 3, 10])
@pytest.mark.parametrize("ttl", [60, 0])
@pytest.mark.parametrize("rf", [1, 3, {"dc1": 2, "dc2": 1}])
@pytest.mark.parametrize(("keyspace", "table"), [("lt", None), ("MyKs", "Odd-Table")])
def test_cql_ddl_is_the_engines(schema, fields, ttl, rf, keyspace, table):
    checked = builtin(schema, **_vars(schema, fields, ttl))
    file_table = ref.default_table(schema)
    names = engine_names(checked, keyspace, {file_table: table} if table else None)
    expected = ref.cql_ddl(schema, keyspace, table or file_table, rf, fields, ttl)
    assert cql_ddl(checked.model.tables, names, rf) == expected


def _cql_pairs(schema: str, fields: int, checked: Checked, names) -> list[tuple[str, str]]:
    ours = {op: [r.text for r in rs] for op, rs in op_statements(checked, "cassandra", names).items()}
    pairs = []
    for name, text in ref.cql_statements(schema, names.keyspace, names.tables.get(
            ref.default_table(schema), ref.default_table(schema)), fields).items():
        m = re.fullmatch(r"update(\d+)", name)
        mine = ours["update"][int(m.group(1))] if m else ours[name][0]
        pairs.append((mine, text))
    return pairs


@pytest.mark.parametrize("schema", SCHEMAS)
@pytest.mark.parametrize("fields", [1, 4, 10])
@pytest.mark.parametrize(("keyspace", "table"), [("lt", None), ("ks2", "other_table")])
def test_cql_statements_are_the_engines(schema, fields, keyspace, table):
    checked = builtin(schema, **_vars(schema, fields, 60))
    file_table = ref.default_table(schema)
    names = engine_names(checked, keyspace, {file_table: table} if table else None)
    pairs = _cql_pairs(schema, fields, checked, names)
    assert pairs and all(mine == theirs for mine, theirs in pairs), pairs


OVERRIDES = [
    {},
    {"table_engine": "MergeTree", "order_by": ["id"],
     "skip_indexes": {"price_minmax": "total_price TYPE minmax GRANULARITY 1"}},
    {"table_engine": "ReplacingMergeTree", "order_by": None, "skip_indexes": {}},
]


@pytest.mark.parametrize("schema", SCHEMAS)
@pytest.mark.parametrize("fields", [1, 3, 10])
@pytest.mark.parametrize("ttl", [60, 0])
@pytest.mark.parametrize("override", OVERRIDES)
def test_clickhouse_ddl_is_the_engines(schema, fields, ttl, override):
    checked = builtin(schema, **_vars(schema, fields, ttl))
    table = ref.default_table(schema)
    order_by = override.get("order_by")
    if order_by and schema == "ycsb":
        order_by = ["y_id"]
    names = engine_names(checked, "lt_db", None, override.get("table_engine"))
    mine = clickhouse_ddl(checked.model.tables, names, override.get("table_engine"), order_by,
                          override.get("skip_indexes"))
    theirs = ref.clickhouse_ddl(schema, "lt_db", table, fields, ttl if schema == "ttl" else None,
                    override.get("table_engine"), order_by, override.get("skip_indexes"))
    if schema == "ttl" and override.get("skip_indexes"):
        # the engine's code puts ttl's `inserted` column after the skip indexes, the file
        # before them: the same table (ClickHouse takes columns and indexes in any order)
        mine, theirs = [_definitions(s) for s in mine], [_definitions(s) for s in theirs]
    assert mine == theirs


def _definitions(ddl: str) -> tuple[str, frozenset[str]]:
    head, _, rest = ddl.partition(" (")
    inner, _, tail = rest.rpartition(") ENGINE")
    return head + tail, frozenset(inner.split(", ")) if tail else frozenset({ddl})


@pytest.mark.parametrize("schema", SCHEMAS)
@pytest.mark.parametrize("fields", [1, 3, 10])
@pytest.mark.parametrize("table_engine", [None, "MergeTree"])
@pytest.mark.parametrize("delete_mode", ["lightweight", "mutation"])
def test_clickhouse_statements_are_the_engines(schema, fields, table_engine, delete_mode):
    checked = builtin(schema, **_vars(schema, fields, 60))
    names = engine_names(checked, "db", None, table_engine)
    ours = op_statements(checked, "clickhouse", names)
    theirs = ref.clickhouse_statements(schema, "db", ref.default_table(schema), fields, delete_mode,
                           final=table_engine != "MergeTree")
    compared = 0
    for name, text in theirs.items():
        m = re.fullmatch(r"update(\d+)", name)
        if name == "delete" and schema == "ttl":
            continue  # the engine builds it, but the ttl schema has no delete op
        mine = ours["update"][int(m.group(1))].text if m else ours[name][0].text
        if delete_mode == "mutation":
            mine = ch.as_mutation(mine)
        assert anonymous(mine) == anonymous(text), name
        compared += 1
    assert compared >= 2


@pytest.mark.parametrize("schema", SCHEMAS)
def test_insert_binds_follow_the_rows_columns(schema):
    """The values of an insert are bound in the order of the engine's row tuples."""
    checked = builtin(schema, **_vars(schema, 5, 60))
    names = engine_names(checked, "db")
    columns = [c for c, _ in ch.columns(schema, 5)]
    for engine in ("cassandra", "clickhouse"):
        insert = op_statements(checked, engine, names)["insert"][0]
        assert insert.binds == columns
    head = op_statements(checked, "clickhouse", names)["insert"][0]
    assert head.insert_rows


@pytest.mark.parametrize("schema", SCHEMAS)
def test_builtin_ops_are_the_engines_ops(schema):
    """The files' ops are the ops the engines gave each schema, no more, no fewer (and
    the ClickHouse update_mode = "mutation" variant of update)."""
    checked = builtin(schema)
    assert set(checked.model.ops) == ref.OPS[schema] | {"update_mutation"}
