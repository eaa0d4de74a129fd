"""What the checks ask of a statement in an SQL slot: its parameters, the columns they
stand for, and references that resolve (the core's half; an engine adds its own rules,
e.g. of a batch insert)."""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator

from loadtower.scenarios.workloads.statement_text import Native, Param, Part, Ref, Text

_COMPARED = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)?\s*(?:=|<>|!=|<=|>=|<|>|\bIN)\s*$", re.I)


def table_named(items: list[Part], tables: Collection[str]) -> str | None:
    """The first table of the file the statement names (``${t}``)."""
    return next((p.body for p in items if isinstance(p, Ref) and p.body in tables), None)


def refs_problem(items: list[Part], tables: Collection[str], groups: dict[str, list[str]]
                 ) -> str | None:
    """A ``${...}`` or ``:g*`` that resolves to nothing (None: all resolve)."""
    for part in items:
        if isinstance(part, Param) and part.group and part.name not in groups:
            return (f":{part.name}* names no column group of the op's table "
                    f"(groups: {', '.join(g + '*' for g in groups) or 'none'})")
        if not isinstance(part, Ref):
            continue
        body = part.body
        group = body.split("|", 1)[0].strip()
        if body in tables or body in ("keyspace", "final"):
            continue
        if group.endswith(("*", "#")) and group[:-1] in groups:
            if "|" in body and not (group.endswith("*") and body.split("|", 1)[1].strip()
                                    .startswith(":")):
                return f"${{{body}}}: write ${{{group[:-1]}*|:param}}"
            continue
        return (f"${{{body}}} is not a table ({', '.join(tables)}), keyspace, final or a "
                f"column group of the op's table "
                f"({', '.join(g + '*' for g in groups) or 'none'})")
    return None


def contexts(items: list[Part], groups: dict[str, list[str]],
             columns: dict[str, str]) -> Iterator[tuple[str, str]]:
    """(parameter, column) where a statement compares or sets a column to a parameter."""
    for j, part in enumerate(items):
        if isinstance(part, Ref) and "|" in part.body:
            group = part.body.split("|", 1)[0].strip().rstrip("*")
            yield part.body.split("|", 1)[1].strip().removeprefix(":"), groups[group][0]
        if not isinstance(part, Param | Native) or j == 0 or not isinstance(items[j - 1], Text):
            continue
        prev = items[j - 1]
        assert isinstance(prev, Text)
        m = _COMPARED.search(prev.text)
        if not m:
            continue
        if m.group(1) and m.group(1) in columns:
            yield part.name, m.group(1)
        elif not m.group(1) and j >= 2:
            ref = items[j - 2]
            if isinstance(ref, Ref) and ref.body.endswith("#") and ref.body[:-1] in groups:
                yield part.name, groups[ref.body[:-1]][0]
