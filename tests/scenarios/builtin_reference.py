"""What the engines' own code made for the three built-in schemas before the built-ins
became their shipped workload files (engines/cassandra/agent/schemas.py, engines/clickhouse/agent/schemas.py
up to issue 16): the CQL and ClickHouse DDL and statements, kept here as the reference
that tests/scenarios/test_workload_file_builtins.py holds the shipped files to (the
same tables, statements and ops as the stored results of earlier runs)."""

from __future__ import annotations

import uuid
from typing import Any

from loadtower.agents.workload.keys import fnv64
from loadtower.agents.workload.values import ValuePool
from loadtower.engines.cassandra.agent.schemas import cql_name, replication_map
from loadtower.engines.clickhouse.agent.schemas import as_mutation, columns, keys, sql_name

VERSION = "ver UInt64 DEFAULT toUnixTimestamp64Nano(now64(9))"
TTL_BLOOM_FP_CHANCE = 0.01  # the ttl schema's bloom_filter_fp_chance unless told (STCS's)

# the ops each schema had (CqlOps.table())
OPS = {
    "ycsb": {"read", "update", "insert", "scan", "read_modify_write", "insert_batch",
             "delete", "delete_batch"},
    "recipes": {"read", "update", "insert", "read_modify_write", "insert_batch", "delete",
                "delete_batch"},
    "ttl": {"read", "update", "insert", "read_modify_write", "insert_batch"},
}


def default_table(schema: str) -> str:
    return {"ycsb": "usertable", "recipes": "recipes", "ttl": "ttl_rows"}[schema]


def _fp_chance(value: float) -> str:
    """A bloom_filter_fp_chance as CQL: a float literal (``1`` would be an int)."""
    return repr(float(value))


def cql_ddl(
    schema: str, keyspace: str, table: str, rf: int | dict[str, int], fields: int,
    ttl: float | None, bloom_filter_fp_chance: float | None = None,
) -> list[str]:
    """CREATE KEYSPACE and TABLE, then ALTER TABLE with the table's options (an existing
    table keeps its old options unless told: the scenario's win). The ttl schema always
    sets default_time_to_live and bloom_filter_fp_chance (the built-in ttl workload file's
    DDL, tests/scenarios/test_workload_file_builtins.py); the others set
    bloom_filter_fp_chance when given."""
    keyspace, table = cql_name(keyspace), cql_name(table)
    ks = f"CREATE KEYSPACE IF NOT EXISTS {keyspace} WITH replication = {replication_map(rf)}"
    options: list[str] = []
    if schema == "ycsb":
        cols = ", ".join(f"field{i} text" for i in range(fields))
        tbl = f"CREATE TABLE IF NOT EXISTS {keyspace}.{table} (y_id text PRIMARY KEY, {cols})"
    elif schema == "recipes":
        tbl = (
            f"CREATE TABLE IF NOT EXISTS {keyspace}.{table} (id uuid, title text, link text, "
            "total_price float, PRIMARY KEY (total_price, id))"
        )
    else:
        seconds = 60 if ttl is None else int(ttl)  # 0: no TTL (the study's table without one)
        tbl = (
            f"CREATE TABLE IF NOT EXISTS {keyspace}.{table} (id bigint PRIMARY KEY, value1 text, "
            "value2 text)"
        )
        options.append(f"default_time_to_live = {seconds}")
        if bloom_filter_fp_chance is None:
            bloom_filter_fp_chance = TTL_BLOOM_FP_CHANCE
    if bloom_filter_fp_chance is not None:
        options.append(f"bloom_filter_fp_chance = {_fp_chance(bloom_filter_fp_chance)}")
    if not options:
        return [ks, tbl]
    with_options = " AND ".join(options)
    return [ks, f"{tbl} WITH {with_options}",
            f"ALTER TABLE {keyspace}.{table} WITH {with_options}"]


def cql_statements(schema: str, keyspace: str, table: str, fields: int) -> dict[str, str]:
    t = f"{cql_name(keyspace)}.{cql_name(table)}"
    if schema == "ycsb":
        cols = ", ".join(f"field{i}" for i in range(fields))
        marks = ", ".join("?" for _ in range(fields))
        stmts = {
            "read": f"SELECT * FROM {t} WHERE y_id = ?",
            "insert": f"INSERT INTO {t} (y_id, {cols}) VALUES (?, {marks})",
            "scan": f"SELECT * FROM {t} WHERE token(y_id) >= token(?) LIMIT ?",
            "delete": f"DELETE FROM {t} WHERE y_id = ?",
        }
        for i in range(fields):
            stmts[f"update{i}"] = f"UPDATE {t} SET field{i} = ? WHERE y_id = ?"
        return stmts
    if schema == "recipes":
        return {
            "read": f"SELECT * FROM {t} WHERE total_price = ? AND id = ?",
            "insert": f"INSERT INTO {t} (id, title, link, total_price) VALUES (?, ?, ?, ?)",
            "delete": f"DELETE FROM {t} WHERE total_price = ? AND id = ?",
        }
    return {
        "read": f"SELECT * FROM {t} WHERE id = ?",
        "insert": f"INSERT INTO {t} (id, value1, value2) VALUES (?, ?, ?)",
    }


def clickhouse_ddl(
    schema: str,
    database: str,
    table: str,
    fields: int,
    ttl_seconds: float | None,
    table_engine: str | None = None,
    order_by: list[str] | None = None,
    skip_indexes: dict[str, str] | None = None,
) -> list[str]:
    t = f"{sql_name(database)}.{sql_name(table)}"
    cols = ", ".join(f"{name} {typ}" for name, typ in columns(schema, fields))
    order = ", ".join(sql_name(c) for c in order_by or [name for name, _ in keys(schema)])
    engine = "MergeTree" if table_engine == "MergeTree" else "ReplacingMergeTree(ver)"
    extra, ttl = "", ""
    if skip_indexes is not None:
        # the definition is SQL by design (TYPE ... GRANULARITY n); the loader limits
        # its characters (engines/clickhouse/orchestrator/target_keys.py INDEX_SPEC): no quote, no semicolon
        extra = "".join(f", INDEX {sql_name(name)} {spec}" for name, spec in skip_indexes.items())
    elif schema == "recipes":
        extra = ", INDEX title_bloom title TYPE bloom_filter(0.01) GRANULARITY 4"
    if schema == "ttl":
        extra += ", inserted DateTime DEFAULT now()"
        if ttl_seconds:  # None or 0: no TTL (the study's table without one)
            ttl = f" TTL inserted + INTERVAL {int(ttl_seconds)} SECOND"
    out = [
        f"CREATE DATABASE IF NOT EXISTS {sql_name(database)}",
        f"CREATE TABLE IF NOT EXISTS {t} ({cols}, {VERSION}{extra}) "
        f"ENGINE = {engine} ORDER BY ({order}){ttl}",
    ]
    if ttl:
        # an existing table keeps its old TTL unless told: the scenario's TTL wins
        out.append(f"ALTER TABLE {t} MODIFY{ttl} SETTINGS materialize_ttl_after_modify = 0")
    return out


def clickhouse_statements(
    schema: str,
    database: str,
    table: str,
    fields: int,
    delete_mode: str = "lightweight",
    update_mode: str = "insert",
    final: bool = True,
) -> dict[str, str]:
    t = f"{sql_name(database)}.{sql_name(table)}"
    cols = columns(schema, fields)
    names = ", ".join(name for name, _ in cols)
    key = keys(schema)
    fin = " FINAL" if final else ""
    where = " AND ".join(f"{name} = {{p{i}:{typ}}}" for i, (name, typ) in enumerate(key))
    if len(key) == 1:
        in_keys = f"{key[0][0]} IN {{keys:Array({key[0][1]})}}"
    else:
        tup = ", ".join(typ for _, typ in key)
        in_keys = f"({', '.join(n for n, _ in key)}) IN {{keys:Array(Tuple({tup}))}}"
    stmts = {
        "read": f"SELECT {names} FROM {t}{fin} WHERE {where}",
        "insert": f"INSERT INTO {t} ({names})",
        "delete": f"DELETE FROM {t} WHERE {in_keys}",
    }
    if schema == "ycsb":
        stmts["scan"] = (
            f"SELECT {names} FROM {t}{fin} WHERE y_id >= {{p0:String}} "
            "ORDER BY y_id LIMIT {p1:UInt32}"
        )
        for i in range(fields):
            if update_mode == "mutation":
                stmts[f"update{i}"] = (
                    f"ALTER TABLE {t} UPDATE field{i} = {{p0:String}} WHERE y_id = {{p1:String}}"
                )
                continue
            picked = ", ".join("{p0:String}" if name == f"field{i}" else name for name, _ in cols)
            stmts[f"update{i}"] = (
                f"INSERT INTO {t} ({names}) SELECT {picked} FROM {t}{fin} "
                "WHERE y_id = {p1:String}"
            )
    elif update_mode == "mutation":
        # the non-key columns of the row, then its key: (values..., key...)
        key_names = {name for name, _ in key}
        values = [(n, typ) for n, typ in cols if n not in key_names]
        sets = ", ".join(f"{n} = {{p{i}:{typ}}}" for i, (n, typ) in enumerate(values))
        at = " AND ".join(f"{n} = {{p{len(values) + i}:{typ}}}" for i, (n, typ) in enumerate(key))
        stmts["update"] = f"ALTER TABLE {t} UPDATE {sets} WHERE {at}"
    if delete_mode == "mutation":
        stmts["delete"] = as_mutation(stmts["delete"])
    return stmts


RECIPE_PRICES = 997  # distinct total_price partitions


class Rows:
    """The engines' keys, rows and where-tuples of key number k (CqlOps' key/row/where):
    what the shipped files' key bindings render (tests/scenarios/test_workload_file_generators.py)."""

    def __init__(self, schema: str, values: ValuePool, fields: int, field_size: int) -> None:
        self.schema, self.values, self.fields, self.field_size = schema, values, fields, field_size

    def key(self, k: int) -> Any:
        if self.schema == "ycsb":
            return f"user{fnv64(k)}"
        if self.schema == "recipes":
            return (float(k % RECIPE_PRICES), uuid.UUID(int=fnv64(k) << 64 | k))
        return k

    def row(self, k: int) -> tuple:
        key = self.key(k)
        if self.schema == "ycsb":
            return (key, *(self.values.text(self.field_size) for _ in range(self.fields)))
        if self.schema == "recipes":
            price, rid = key
            return (rid, self.values.text(self.field_size), self.values.text(32), price)
        return (key, self.values.text(self.field_size), self.values.text(self.field_size))

    def where(self, k: int) -> tuple:
        key = self.key(k)
        return key if isinstance(key, tuple) else (key,)
