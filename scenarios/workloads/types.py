"""Column types of a workload file: one portable name per type, mapped to each engine.

A table's columns are declared once with these names; the CQL and ClickHouse tables
use the engine's own type for each (a table may override one per engine with
``types``). The kind says which generators can fill the column.
"""

from __future__ import annotations

from typing import Literal

# portable name -> (CQL type, ClickHouse type, kind)
TYPES: dict[str, tuple[str, str, str]] = {
    "text": ("text", "String", "text"),
    "ascii": ("ascii", "String", "text"),
    "blob": ("blob", "String", "blob"),
    "boolean": ("boolean", "Bool", "bool"),
    "tinyint": ("tinyint", "Int8", "int"),
    "smallint": ("smallint", "Int16", "int"),
    "int": ("int", "Int32", "int"),
    "bigint": ("bigint", "Int64", "int"),
    "float": ("float", "Float32", "float"),
    "double": ("double", "Float64", "float"),
    "uuid": ("uuid", "UUID", "uuid"),
    "timeuuid": ("timeuuid", "UUID", "timeuuid"),
    "timestamp": ("timestamp", "DateTime64(3)", "timestamp"),
    "date": ("date", "Date", "date"),
}
TypeName = Literal[
    "text", "ascii", "blob", "boolean", "tinyint", "smallint", "int", "bigint", "float",
    "double", "uuid", "timeuuid", "timestamp", "date",
]  # fmt: skip  (the keys of TYPES; tests/scenarios check they agree)

# the kinds a kind of value can fill: an int fills a float column, a uuid v1 a uuid column
FITS: dict[str, frozenset[str]] = {
    "int": frozenset({"int", "float"}),
    "float": frozenset({"float"}),
    "text": frozenset({"text"}),
    "blob": frozenset({"blob"}),
    "bool": frozenset({"bool"}),
    "uuid": frozenset({"uuid"}),
    "timeuuid": frozenset({"uuid", "timeuuid"}),
    "timestamp": frozenset({"timestamp"}),
    "date": frozenset({"date"}),
}


def kind_of(type_name: str) -> str:
    return TYPES[type_name][2]


def cql_type(type_name: str) -> str:
    return TYPES[type_name][0]


def clickhouse_type(type_name: str) -> str:
    return TYPES[type_name][1]
