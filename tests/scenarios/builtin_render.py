"""The DDL and statements the product renders for a built-in workload (its shipped file,
scenarios/builtin/workloads/) under any keyspace and table name, for tests that check
names, quoting and options (what agents run: target_spec.render_for_target's parts)."""

from __future__ import annotations

from loadtower.engines.cassandra.orchestrator.workload import cql_ddl
from loadtower.engines.clickhouse.orchestrator.workload import clickhouse_ddl
from loadtower.scenarios.workloads.builtin_files import builtin_path
from loadtower.scenarios.workloads.checks import Checked
from loadtower.scenarios.workloads.loader import load_workload_file
from tests.scenarios.rendered import engine_names, op_statements

TABLES = {"ycsb": "usertable", "recipes": "recipes", "ttl": "ttl_rows"}


def builtin(schema: str, fields: int = 2, ttl: int | None = None) -> Checked:
    given: dict[str, int | str] = {"fields": fields} if schema == "ycsb" else {}
    if schema == "ttl" and ttl is not None:
        given["ttl"] = ttl
    return load_workload_file(builtin_path(schema), given)


def cql(schema: str, keyspace: str, table: str, rf: int | dict[str, int] = 1, fields: int = 2,
        ttl: int | None = None) -> tuple[list[str], list[str]]:
    """(DDL, every statement) on a CQL target."""
    checked = builtin(schema, fields, ttl)
    names = engine_names(checked, keyspace, {TABLES[schema]: table})
    statements = [r.text for rs in op_statements(checked, "cassandra", names).values() for r in rs]
    return cql_ddl(checked.model.tables, names, rf), statements


def clickhouse(schema: str, database: str, table: str, fields: int = 2, ttl: int | None = None,
               order_by: list[str] | None = None) -> list[str]:
    """The DDL on a ClickHouse target."""
    checked = builtin(schema, fields, ttl)
    names = engine_names(checked, database, {TABLES[schema]: table})
    return clickhouse_ddl(checked.model.tables, names, None, order_by, None)
