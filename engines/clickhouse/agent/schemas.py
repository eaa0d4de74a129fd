"""ClickHouse names and the built-in schemas' columns (what the scenario checks of a
ClickHouse target's ``order_by`` look at), and ``as_mutation`` (``delete_mode``).

The tables and statements of every workload, the built-in ones too, are their workload
files rendered for the target (scenarios/workloads/, scenarios/builtin/workloads/): a
``ReplacingMergeTree(ver)`` with ``ver`` stamped at insert, reads with ``FINAL``, ycsb's
update an ``INSERT ... SELECT`` of the newest row, ``update_mode = "mutation"`` the
files' ``update_mutation`` (``ALTER TABLE ... UPDATE``).
"""

from __future__ import annotations

import re

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


def as_mutation(sql: str) -> str:
    """``DELETE FROM t WHERE c`` -> ``ALTER TABLE t DELETE WHERE c``; others unchanged."""
    m = _DELETE.match(sql)
    return f"ALTER TABLE {m.group(1)} DELETE WHERE {m.group(2)}" if m else sql
