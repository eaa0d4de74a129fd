"""A workload file on ClickHouse: backquoted names, ``{name:Type}`` parameters (and the
file's own), ``${final}`` as `` FINAL`` on tables whose engine folds rows at merges, an
``INSERT ... VALUES`` as the head of one ``client.insert`` of the batch's rows, and the
DDL: ``CREATE TABLE`` with engine, ORDER BY, skip indexes, TTL and settings (a target's
table_engine / order_by / skip_indexes replace the file's). A table with a TTL gets it
again by ``ALTER TABLE``, so that an existing table takes it, as the built-ins do."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from loadtower.engines.clickhouse.agent.schemas import sql_name
from loadtower.engines.clickhouse.orchestrator.file_slot import clickhouse_of
from loadtower.engines.clickhouse.orchestrator.target_keys import ClickhouseTargetKeys
from loadtower.scenarios.models import Target
from loadtower.scenarios.workloads.checks import Checked
from loadtower.scenarios.workloads.model_types import OptionValue
from loadtower.scenarios.workloads.models import Table
from loadtower.scenarios.workloads.render_statements import INSERT_VALUES, Names
from loadtower.scenarios.workloads.sql_rendering import SqlRendering
from loadtower.scenarios.workloads.statement_text import ParamList, Text

# a workload file's portable column types (scenarios/workloads/types.py) in ClickHouse
CLICKHOUSE_TYPES: dict[str, str] = {
    "text": "String", "ascii": "String", "blob": "String", "boolean": "Bool",
    "tinyint": "Int8", "smallint": "Int16", "int": "Int32", "bigint": "Int64",
    "float": "Float32", "double": "Float64", "uuid": "UUID", "timeuuid": "UUID",
    "timestamp": "DateTime64(3)", "date": "Date",
}


def _setting(value: OptionValue) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int | float):
        return repr(value)
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def clickhouse_engine(table: Table, table_engine: str | None = None) -> str:
    """The table's engine; a scenario target's ``table_engine`` replaces it."""
    own = clickhouse_of(table)
    if table_engine == "ReplacingMergeTree" and "ver" in own.extra_columns:
        return "ReplacingMergeTree(ver)"
    return table_engine or own.engine


def final_of(table: Table, table_engine: str | None = None) -> str:
    """What ``${final}`` is in reads of this table: " FINAL" where the engine folds rows
    at merges (so a read sees only the newest version), else nothing."""
    engine = clickhouse_engine(table, table_engine)
    return " FINAL" if "Replacing" in engine or "Collapsing" in engine else ""


class ClickHouseRendering(SqlRendering):
    slot = "clickhouse"
    native_params = True

    def quote(self, name: str) -> str:
        return sql_name(name)

    def marker(self, name: str, type_: str) -> str:
        return f"{{{name}:{type_}}}"

    def list_marker(self, names: tuple[str, ...], types: list[str]) -> str:
        inner = types[0] if len(types) == 1 else f"Tuple({', '.join(types)})"
        return f"{{{'_'.join(names)}:Array({inner})}}"

    def column_type(self, portable: str) -> str:
        return CLICKHOUSE_TYPES[portable]

    def final(self, names: Names, table: str | None) -> str:
        return names.finals.get(table or "", "")

    def rows_insert(self, text: str) -> str | None:
        m = INSERT_VALUES.match(text)
        return f"INSERT INTO {m['table']} ({m['cols'].strip()})" if m else None

    def problem(self, statement: Any, tables: Collection[str], groups: dict[str, list[str]],
                rows: int) -> str | None:
        bad = super().problem(statement, tables, groups, rows)
        if bad or rows <= 1:
            return bad
        items = self.parts(statement)
        text = "".join(p.text if isinstance(p, Text) else "x" for p in items)
        if INSERT_VALUES.match(text) or any(isinstance(p, ParamList) for p in items):
            return None
        return ("a batch op's ClickHouse statement must be an INSERT ... VALUES (one insert "
                "of the batch's rows) or take a list parameter :[...]")

    def names(self, checked: Checked, keyspace: str, tables: dict[str, str] | None,
              target: Target) -> Names:
        table_engine = ClickhouseTargetKeys.of(target).table_engine
        finals = {name: final_of(t, table_engine) for name, t in checked.model.tables.items()}
        return Names(keyspace, dict(tables or {}), finals)

    def ddl(self, checked: Checked, target: Target, names: Names) -> list[str]:
        keys = ClickhouseTargetKeys.of(target)
        skip_indexes = ({k: str(v) for k, v in keys.skip_indexes.items()}
                        if keys.skip_indexes is not None else None)
        return clickhouse_ddl(checked.model.tables, names, keys.table_engine,
                              keys.order_by, skip_indexes)


RENDERING = ClickHouseRendering()


def clickhouse_ddl(
    tables: dict[str, Table],
    names: Names,
    table_engine: str | None = None,
    order_by: list[str] | None = None,
    skip_indexes: dict[str, str] | None = None,
) -> list[str]:
    """The DDL; a target's table_engine / order_by / skip_indexes replace the file's
    (skip_indexes: all of them)."""
    db = sql_name(names.keyspace)
    out = [f"CREATE DATABASE IF NOT EXISTS {db}"]
    for name, table in tables.items():
        spec = clickhouse_of(table)
        if spec.ddl is not None:
            out += RENDERING.raw(spec.ddl, names)
            continue
        t = f"{db}.{sql_name(names.tables.get(name, name))}"
        cols = [
            f"{sql_name(c)} {spec.types.get(c, CLICKHOUSE_TYPES[typ])}"
            for c, typ in table.column_types().items()
        ]
        cols += [f"{sql_name(c)} {definition}" for c, definition in spec.extra_columns.items()]
        indexes = spec.skip_indexes if skip_indexes is None else skip_indexes
        cols += [f"INDEX {sql_name(n)} {definition}" for n, definition in indexes.items()]
        keys = order_by or spec.order_by or [*table.partition_key, *table.clustering_key]
        text = (
            f"CREATE TABLE IF NOT EXISTS {t} ({', '.join(cols)}) "
            f"ENGINE = {clickhouse_engine(table, table_engine)}"
        )
        if spec.partition_by:
            text += f" PARTITION BY {spec.partition_by}"
        text += f" ORDER BY ({', '.join(sql_name(k) for k in keys)})"
        ttl = ""
        if spec.ttl is not None and spec.ttl.seconds:
            ttl = f" TTL {sql_name(spec.ttl.column)} + INTERVAL {spec.ttl.seconds} SECOND"
        text += ttl
        if spec.settings:
            text += " SETTINGS " + ", ".join(f"{k} = {_setting(v)}" for k, v in spec.settings.items())
        out.append(text)
        if ttl:  # an existing table takes the new TTL (unmaterialized), as the built-ins do
            out.append(f"ALTER TABLE {t} MODIFY{ttl} SETTINGS materialize_ttl_after_modify = 0")
    return out
