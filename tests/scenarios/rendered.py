"""The SQL engines' renderings of workload files, as the tests ask them (the core finds
them through the engines' kinds: scenarios/workloads/rendering.py)."""

from __future__ import annotations

from loadtower.scenarios.models import Target
from loadtower.scenarios.workloads.checks import Checked
from loadtower.scenarios.workloads.render_statements import Names, Rendered
from loadtower.scenarios.workloads.rendering import workload_rendering
from loadtower.scenarios.workloads.sql_rendering import SqlRendering


def sql(slot: str) -> SqlRendering:
    found = workload_rendering(slot)
    assert isinstance(found, SqlRendering), slot
    return found


def engine_names(checked: Checked, keyspace: str, tables: dict[str, str] | None = None,
                 table_engine: str | None = None) -> Names:
    """The names of a target of either SQL engine (ClickHouse's: with the tables' FINAL,
    which CQL never reads)."""
    target = Target(table_engine=table_engine) if table_engine else Target()
    return sql("clickhouse").names(checked, keyspace, tables, target)


def op_statements(checked: Checked, slot: str, names: Names) -> dict[str, list[Rendered]]:
    return sql(slot).op_statements(checked, names)
