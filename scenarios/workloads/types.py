"""Column types of a workload file: one portable name per type.

A table's columns are declared once with these names; each engine's rendering gives the
engine's own type for each (its ``column_type``; a table may override one per engine
with ``types``). The kind says which generators can fill the column.
"""

from __future__ import annotations

from typing import Literal

# portable name -> kind (what fills it)
TYPES: dict[str, str] = {
    "text": "text",
    "ascii": "text",
    "blob": "blob",
    "boolean": "bool",
    "tinyint": "int",
    "smallint": "int",
    "int": "int",
    "bigint": "int",
    "float": "float",
    "double": "float",
    "uuid": "uuid",
    "timeuuid": "timeuuid",
    "timestamp": "timestamp",
    "date": "date",
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
    return TYPES[type_name]
