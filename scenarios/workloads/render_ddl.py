"""A workload file's tables as DDL: CQL ``CREATE TABLE`` with its options, ClickHouse
``CREATE TABLE`` with engine, ORDER BY, skip indexes, TTL and settings.

The keyspace (database) statement comes from the scenario's target (its replication).
A table with options gets them again by ``ALTER TABLE`` (CQL; ClickHouse: its TTL), so
that an existing table takes the file's options, as the built-in schemas do.
"""

from __future__ import annotations

from loadtower.engines.cassandra.agent.schemas import cql_name, replication_map
from loadtower.engines.clickhouse.agent.schemas import sql_name
from loadtower.scenarios.workloads.models import OptionValue, Table
from loadtower.scenarios.workloads.render_statements import Names, render
from loadtower.scenarios.workloads.types import clickhouse_type, cql_type


def _cql_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, dict):
        items = ", ".join(f"{_cql_text(k)}: {_cql_text(v)}" for k, v in value.items())
        return "{" + items + "}"
    return _cql_text(value)


def _cql_text(value: object) -> str:
    if isinstance(value, bool):
        value = "true" if value else "false"
    return "'" + str(value).replace("'", "''") + "'"


def _raw(statements: list[str], engine: str, names: Names) -> list[str]:
    return [render(s, engine, names, {}, {}).text for s in statements]


def cql_ddl(tables: dict[str, Table], names: Names, rf: int | dict[str, int]) -> list[str]:
    ks = cql_name(names.keyspace)
    out = [f"CREATE KEYSPACE IF NOT EXISTS {ks} WITH replication = {replication_map(rf)}"]
    for name, table in tables.items():
        spec = table.cassandra
        if spec.ddl is not None:
            out += _raw(spec.ddl, "cassandra", names)
            continue
        t = f"{ks}.{cql_name(names.tables.get(name, name))}"
        types = {c: spec.types.get(c, cql_type(typ)) for c, typ in table.column_types().items()}
        inline = len(table.partition_key) == 1 and not table.clustering_key
        cols = [
            f"{c} {typ}" + (" PRIMARY KEY" if inline and c == table.partition_key[0] else "")
            for c, typ in types.items()
        ]
        if not inline:
            pk = table.partition_key[0] if len(table.partition_key) == 1 else (
                "(" + ", ".join(table.partition_key) + ")"
            )
            cols.append(f"PRIMARY KEY ({', '.join([pk, *table.clustering_key])})")
        withs = []
        if spec.clustering_order:
            order = ", ".join(f"{c} {d}" for c, d in spec.clustering_order.items())
            withs.append(f"CLUSTERING ORDER BY ({order})")
        options = [f"{k} = {_cql_value(v)}" for k, v in spec.options.items()]
        with_text = " WITH " + " AND ".join(withs + options) if withs or options else ""
        out.append(f"CREATE TABLE IF NOT EXISTS {t} ({', '.join(cols)}){with_text}")
        if options:  # an existing table takes the file's options too
            out.append(f"ALTER TABLE {t} WITH {' AND '.join(options)}")
    return out


def _setting(value: OptionValue) -> str:
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, int | float):
        return repr(value)
    return "'" + value.replace("\\", "\\\\").replace("'", "\\'") + "'"


def clickhouse_engine(table: Table, table_engine: str | None = None) -> str:
    """The table's engine; a scenario target's ``table_engine`` replaces it."""
    if table_engine == "ReplacingMergeTree" and "ver" in table.clickhouse.extra_columns:
        return "ReplacingMergeTree(ver)"
    return table_engine or table.clickhouse.engine


def final_of(table: Table, table_engine: str | None = None) -> str:
    """What ``${final}`` is in ClickHouse reads of this table: " FINAL" where the engine
    folds rows at merges (so a read sees only the newest version), else nothing."""
    engine = clickhouse_engine(table, table_engine)
    return " FINAL" if "Replacing" in engine or "Collapsing" in engine else ""


def clickhouse_ddl(
    tables: dict[str, Table],
    names: Names,
    table_engine: str | None = None,
    order_by: list[str] | None = None,
    skip_indexes: dict[str, str] | None = None,
) -> list[str]:
    """The DDL; a scenario target's table_engine / order_by / skip_indexes replace the
    file's (skip_indexes: all of them)."""
    db = sql_name(names.keyspace)
    out = [f"CREATE DATABASE IF NOT EXISTS {db}"]
    for name, table in tables.items():
        spec = table.clickhouse
        if spec.ddl is not None:
            out += _raw(spec.ddl, "clickhouse", names)
            continue
        t = f"{db}.{sql_name(names.tables.get(name, name))}"
        cols = [
            f"{sql_name(c)} {spec.types.get(c, clickhouse_type(typ))}"
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
