"""ClickHouse tables and statements of the three workload families of ``agents/cql``.

The tables mirror the CQL ones column for column (CQL ``text`` -> String, ``uuid`` ->
UUID, ``float`` -> Float32, ``bigint`` -> Int64), plus the columns ClickHouse needs:

- ``ver UInt64 DEFAULT toUnixTimestamp64Nano(now64(9))``: every table is a
  ``ReplacingMergeTree(ver)`` so that an insert of an existing key is an upsert, as in
  CQL. Reads, scans and counts use ``FINAL`` so they see only the newest version.
  ``ver`` is stamped by the server at insert (the clocks of a cluster's servers must
  agree to within the time between two writes of one key).
- ycsb's ``update{i}`` (CQL ``UPDATE ... SET field{i} = ?``) is an
  ``INSERT ... SELECT`` of the newest row with field i replaced: a new version, no
  mutation. Unlike CQL it does not create a missing row.
- ``ttl``: ``inserted DateTime DEFAULT now()`` and ``TTL inserted + INTERVAL n SECOND``
  when ``ttl_seconds`` is given and not 0 (an existing table gets the new TTL,
  unmaterialized).
  ClickHouse drops expired rows at merges, so a read may still see an expired row.
- ``recipes``: ORDER BY ``(total_price, id)``, the CQL primary key that its reads and
  deletes filter on, and a bloom_filter skip index on ``title``.

Statements use server-side binding: ``{p0:Type}, {p1:Type}, ...`` for the op's
parameters in order, and ``{keys:Array(...)}`` for deletes, which always take a list
of keys (one key, or a whole batch in ONE statement). ``insert`` is only the head
``INSERT INTO db.t (cols)``: the session sends the rows with ``client.insert``.
Deletes are lightweight (``DELETE FROM``); ``delete_mode="mutation"`` makes them
``ALTER TABLE ... DELETE`` (synchronous only with the ``mutations_sync`` setting).

The scenario's target may change the table (``table_engine``, ``order_by``,
``skip_indexes``) and the updates: ``update_mode="mutation"`` makes ``update``
an ``ALTER TABLE ... UPDATE`` of the row's non-key columns. ``table_engine="MergeTree"``
(experiment 1's table) keeps every inserted version, so reads do not use ``FINAL``.
"""

from __future__ import annotations

import re

VERSION = "ver UInt64 DEFAULT toUnixTimestamp64Nano(now64(9))"
_UNQUOTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_DELETE = re.compile(r"^\s*DELETE\s+FROM\s+(\S+)\s+WHERE\s+(.+)$", re.I | re.S)


def sql_name(name: str) -> str:
    """A database, table, column or index name for a statement: a plain identifier as it
    is, anything else in backquotes (ClickHouse's quoting, the same name), so that no name
    can end the statement or add another one."""
    if _UNQUOTED.fullmatch(name):
        return name
    return "`" + name.replace("\\", "\\\\").replace("`", "\\`") + "`"


def default_table(schema: str) -> str:
    return {"ycsb": "usertable", "recipes": "recipes", "ttl": "ttl_rows"}[schema]


def columns(schema: str, fields: int) -> list[tuple[str, str]]:
    """The CQL columns, in the order of the rows the ops send."""
    if schema == "ycsb":
        return [("y_id", "String"), *((f"field{i}", "String") for i in range(fields))]
    if schema == "recipes":
        return [("id", "UUID"), ("title", "String"), ("link", "String"), ("total_price", "Float32")]
    return [("id", "Int64"), ("value1", "String"), ("value2", "String")]


def unique_column(schema: str) -> str:
    """The column that tells rows apart (what a ReplacingMergeTree's ORDER BY must hold)."""
    return "y_id" if schema == "ycsb" else "id"


def keys(schema: str) -> list[tuple[str, str]]:
    """The key columns, in the order of the ops' ``where`` tuples."""
    if schema == "ycsb":
        return [("y_id", "String")]
    if schema == "recipes":
        return [("total_price", "Float32"), ("id", "UUID")]
    return [("id", "Int64")]


def ddl(
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
        # its characters (scenarios/identifiers.py INDEX_SPEC): no quote, no semicolon
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


def as_mutation(sql: str) -> str:
    """``DELETE FROM t WHERE c`` -> ``ALTER TABLE t DELETE WHERE c``; others unchanged."""
    m = _DELETE.match(sql)
    return f"ALTER TABLE {m.group(1)} DELETE WHERE {m.group(2)}" if m else sql


def statements(
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
