"""A workload file's statements as an engine's driver takes them, in the engine's
SQL dialect (`SqlDialect`, given by the engine's package: ``scenarios/workloads/
sql_rendering.py``).

``:name`` becomes the dialect's marker (``?``, or ``{name:Type}`` with the type of the
column it stands for); ``${table}`` the keyspace-qualified table;
column-group references their members. A dialect may turn ``INSERT INTO t (cols) VALUES
(:a, ...)`` into a head whose rows go in one insert (a client's block insert: a batch of
N rows).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Protocol

from loadtower.scenarios.workloads.statement_text import (
    Native,
    Param,
    ParamList,
    Part,
    Ref,
    Text,
    parts,
)

INSERT_VALUES = re.compile(
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
    insert_rows: bool = False  # a head whose rows go in one insert (a block insert)


class SqlDialect(Protocol):
    """How an engine writes what a workload file's statement leaves open."""

    native_params: bool  # it has its own parameters, ``{name:Type}``, kept as they are

    def quote(self, name: str) -> str:
        """A keyspace's or a table's name, quoted where it must be."""
        ...

    def marker(self, name: str, type_: str) -> str:
        """The bind marker of parameter `name` (of the engine's type `type_`)."""
        ...

    def list_marker(self, names: tuple[str, ...], types: list[str]) -> str:
        """The bind marker of ``:[a, b]``: the list of (a, b) over the batch's rows."""
        ...

    def final(self, names: Names, table: str | None) -> str:
        """What ``${final}`` is in a read of `table`."""
        ...

    def rows_insert(self, text: str) -> str | None:
        """The head of an ``INSERT ... VALUES`` whose rows go in one insert, or None: the
        statement runs as it is."""
        ...


def variants(statement: str, groups: dict[str, list[str]], native_params: bool = False
             ) -> int:
    """How many statements one op has: the members of the group it picks from (``${g#}``
    or ``${g*|:p}``), else 1."""
    for part in parts(statement, native_params):
        if isinstance(part, Ref) and (part.body.endswith("#") or "|" in part.body):
            name = part.body.split("|", 1)[0].strip().rstrip("#*")
            return max(1, len(groups.get(name, [])))
    return 1


def render(
    statement: str,
    dialect: SqlDialect,
    names: Names,
    groups: dict[str, list[str]],
    types: dict[str, str],
    picked: int = 0,
    table: str | None = None,
) -> Rendered:
    """`statement` in `dialect`; `types`: each parameter's type on the engine; `picked`:
    the group member of this variant."""
    out: list[str] = []
    binds: list[Bind] = []

    def marker(name: str) -> str:
        binds.append(name)
        return dialect.marker(name, types.get(name, ""))

    for part in parts(statement, dialect.native_params):
        out.append(_one(part, dialect, names, groups, types, picked, table, marker, binds))
    text = "".join(out)
    head = dialect.rows_insert(text)
    return Rendered(text, binds) if head is None else Rendered(head, binds, True)


def _one(
    part: Part,
    dialect: SqlDialect,
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
        return dialect.list_marker(part.names, [types.get(n, "") for n in part.names])
    return _ref(part.body, dialect, names, groups, picked, table, mark)


def _ref(
    body: str,
    dialect: SqlDialect,
    names: Names,
    groups: dict[str, list[str]],
    picked: int,
    table: str | None,
    mark: Callable[[str], str],
) -> str:
    if body == "keyspace":
        return dialect.quote(names.keyspace)
    if body == "final":
        return dialect.final(names, table)
    if "|" in body:
        group, param = (s.strip() for s in body.split("|", 1))
        members = groups[group.rstrip("*")]
        param_mark = mark(param.removeprefix(":"))
        return ", ".join(param_mark if i == picked else m for i, m in enumerate(members))
    if body.endswith("*"):
        return ", ".join(groups[body[:-1]])
    if body.endswith("#"):
        return groups[body[:-1]][picked]
    return f"{dialect.quote(names.keyspace)}.{dialect.quote(names.tables.get(body, body))}"
