"""A workload file's statements as each engine's driver takes them.

``:name`` becomes CQL's ``?`` and ClickHouse's ``{name:Type}`` (the type of the column
it stands for); ``${table}`` the keyspace-qualified table; column-group references
their members. A ClickHouse ``INSERT INTO t (cols) VALUES (:a, ...)`` becomes the head
``INSERT INTO t (cols)``: its rows go in one ``client.insert`` (a batch: N rows).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from loadtower.engines.cassandra.agent.schemas import cql_name
from loadtower.engines.clickhouse.agent.schemas import sql_name
from loadtower.scenarios.workloads.statement_text import (
    Native,
    Param,
    ParamList,
    Part,
    Ref,
    Text,
    parts,
)

_INSERT = re.compile(
    r"^\s*INSERT\s+INTO\s+(?P<table>\S+)\s*\((?P<cols>[^()]*)\)\s*VALUES\s*\((?P<vals>.*)\)\s*;?\s*$",
    re.I | re.S,
)
Bind = str | tuple[str, ...]  # one parameter, or the list of (names) over the batch's rows


@dataclass(frozen=True)
class Names:
    """What ``${...}`` references resolve to on one engine."""

    keyspace: str
    tables: dict[str, str]  # the file's table name -> the table's name in the database
    finals: dict[str, str] = field(default_factory=dict)  # table -> " FINAL" or ""


@dataclass(frozen=True)
class Rendered:
    text: str
    binds: list[Bind]  # in the order of the bind markers
    insert_rows: bool = False  # ClickHouse: a head whose rows go in one client.insert


def variants(statement: str, groups: dict[str, list[str]], clickhouse: bool = False) -> int:
    """How many statements one op has: the members of the group it picks from (``${g#}``
    or ``${g*|:p}``), else 1."""
    for part in parts(statement, clickhouse):
        if isinstance(part, Ref) and (part.body.endswith("#") or "|" in part.body):
            name = part.body.split("|", 1)[0].strip().rstrip("#*")
            return max(1, len(groups.get(name, [])))
    return 1


def _table(name: str, names: Names, engine: str) -> str:
    quote = sql_name if engine == "clickhouse" else cql_name
    return f"{quote(names.keyspace)}.{quote(names.tables.get(name, name))}"


def render(
    statement: str,
    engine: str,
    names: Names,
    groups: dict[str, list[str]],
    types: dict[str, str],
    picked: int = 0,
    table: str | None = None,
) -> Rendered:
    """`statement` for `engine` ("cassandra" or "clickhouse"); `types`: each parameter's
    ClickHouse type; `picked`: the group member of this variant."""
    clickhouse = engine == "clickhouse"
    out: list[str] = []
    binds: list[Bind] = []

    def marker(name: str) -> str:
        binds.append(name)
        return f"{{{name}:{types[name]}}}" if clickhouse else "?"

    for part in parts(statement, clickhouse):
        out.append(_one(part, engine, names, groups, types, picked, table, marker, binds))
    text = "".join(out)
    if clickhouse:
        m = _INSERT.match(text)
        if m and all(b is not None for b in binds):
            return Rendered(f"INSERT INTO {m['table']} ({m['cols'].strip()})", binds, True)
    return Rendered(text, binds)


def _one(
    part: Part,
    engine: str,
    names: Names,
    groups: dict[str, list[str]],
    types: dict[str, str],
    picked: int,
    table: str | None,
    mark: Callable[[str], str],
    binds: list[Bind],
) -> str:
    if isinstance(part, Text):
        return part.text
    if isinstance(part, Native):
        binds.append(part.name)
        return f"{{{part.name}:{part.type}}}"
    if isinstance(part, Param):
        members = groups.get(part.name, []) if part.group else [part.name]
        return ", ".join(mark(m) for m in members)
    if isinstance(part, ParamList):
        binds.append(part.names)
        if engine != "clickhouse":
            return "?"
        inner = [types[n] for n in part.names]
        kind = inner[0] if len(inner) == 1 else f"Tuple({', '.join(inner)})"
        return f"{{{'_'.join(part.names)}:Array({kind})}}"
    return _ref(part.body, engine, names, groups, picked, table, mark)


def _ref(
    body: str,
    engine: str,
    names: Names,
    groups: dict[str, list[str]],
    picked: int,
    table: str | None,
    mark: Callable[[str], str],
) -> str:
    if body == "keyspace":
        quote = sql_name if engine == "clickhouse" else cql_name
        return quote(names.keyspace)
    if body == "final":
        return names.finals.get(table or "", "") if engine == "clickhouse" else ""
    if "|" in body:
        group, param = (s.strip() for s in body.split("|", 1))
        members = groups[group.rstrip("*")]
        param_mark = mark(param.removeprefix(":"))
        return ", ".join(param_mark if i == picked else m for i, m in enumerate(members))
    if body.endswith("*"):
        return ", ".join(groups[body[:-1]])
    if body.endswith("#"):
        return groups[body[:-1]][picked]
    return _table(body, names, engine)
