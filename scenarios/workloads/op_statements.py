"""Each op's statements on one engine, rendered (one per variant of a picked group
member), with the types its parameters have there."""

from __future__ import annotations

from loadtower.scenarios.workloads.checks import Checked
from loadtower.scenarios.workloads.render_ddl import final_of
from loadtower.scenarios.workloads.render_statements import Names, Rendered, render, variants
from loadtower.scenarios.workloads.types import clickhouse_type, cql_type


def engine_names(checked: Checked, keyspace: str, tables: dict[str, str] | None = None,
                 table_engine: str | None = None) -> Names:
    model = checked.model
    finals = {name: final_of(t, table_engine) for name, t in model.tables.items()}
    return Names(keyspace, dict(tables or {}), finals)


def param_engine_types(checked: Checked, op: str, engine: str) -> dict[str, str]:
    """Each parameter's type on `engine` (a table's per-engine ``types`` override counts)."""
    table = checked.model.tables[checked.op_tables[op]]
    spec = table.clickhouse if engine == "clickhouse" else table.cassandra
    to_engine = clickhouse_type if engine == "clickhouse" else cql_type
    out = {}
    for param, typ in checked.param_types[op].items():
        column = checked.param_columns[op].get(param)
        out[param] = spec.types.get(column or "", to_engine(typ))
    return out


def op_statements(checked: Checked, engine: str, names: Names) -> dict[str, list[Rendered]]:
    """op -> its statement on `engine` (one per variant); ops without one are left out."""
    out: dict[str, list[Rendered]] = {}
    for name, op in checked.model.ops.items():
        statement = getattr(op, engine, None)
        if not isinstance(statement, str):
            continue
        table = checked.op_tables[name]
        groups = checked.model.tables[table].groups()
        types = param_engine_types(checked, name, engine)
        count = variants(statement, groups, engine == "clickhouse")
        out[name] = [
            render(statement, engine, names, groups, types, picked=i, table=table)
            for i in range(count)
        ]
    return out
