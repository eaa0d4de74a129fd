"""The ``mongodb`` slot of an op: one pymongo call whose templates (``filter``,
``document``, ``update``, ``pipeline``, ``limit``) hold parameters and references.

- A string that is exactly ``":name"`` is parameter ``name``; ``":g*"`` is the
  parameters of column group g's members, written as the value of the key ``"${g*}"``:
  ``document = { _id = ":y_id", "${field*}" = ":field*" }`` is the document
  ``{_id, field0: :field0, field1: :field1, ...}``.
- ``${name}`` in a key or a string: a table of the file (its collection's name),
  ``${keyspace}`` (the database), ``${g#}`` (the member the op picked: one call per
  member, as statements), ``${g*}`` as a whole key (above).

What the checks need (parameters, the columns they stand for, bad references), shared
with the rendering (workload.py).
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator
from typing import Any

from loadtower.engines.mongodb.orchestrator.file_slot import MongodbOp

PARAM = re.compile(r"^:([A-Za-z_][A-Za-z0-9_]*)(\*?)$")
REF = re.compile(r"\$\{([^{}]*)\}")
TEMPLATES = ("filter", "document", "update", "pipeline", "limit")
READS = ("find_one", "find", "aggregate", "count_documents")


def templates(op: MongodbOp) -> Iterator[tuple[str, Any]]:
    """(key, template) of the call's parameterised parts, in order."""
    for key in TEMPLATES:
        value = getattr(op, key)
        if value is not None:
            yield key, value


def group_key(key: str) -> str | None:
    """The group of a key written ``"${g*}"`` (None: another key)."""
    m = REF.fullmatch(key.strip())
    return m.group(1).strip()[:-1] if m and m.group(1).strip().endswith("*") else None


def params(node: Any, groups: dict[str, list[str]]) -> Iterator[str]:
    """The parameters of a template in order (a group's: its members)."""
    if isinstance(node, dict):
        for value in node.values():
            yield from params(value, groups)
    elif isinstance(node, list):
        for value in node:
            yield from params(value, groups)
    elif isinstance(node, str) and (m := PARAM.match(node)):
        yield from (groups.get(m.group(1), []) if m.group(2) else [m.group(1)])


def op_params(op: MongodbOp, groups: dict[str, list[str]]) -> list[str]:
    return list(dict.fromkeys(p for _, t in templates(op) for p in params(t, groups)))


def contexts(node: Any, groups: dict[str, list[str]], columns: dict[str, str],
             column: str | None = None) -> Iterator[tuple[str, str]]:
    """(parameter, column) for a parameter under a key that is a column (or an operator
    such as ``$gte`` under one): ``{ ts = { "$gte" = ":since" } }`` -> (since, ts)."""
    if isinstance(node, dict):
        for key, value in node.items():
            here = column
            ref = REF.fullmatch(key.strip())
            if ref and ref.group(1).strip()[:-1] in groups:
                here = groups[ref.group(1).strip()[:-1]][0]
            elif key in columns:
                here = key
            elif not key.startswith("$"):
                here = None
            yield from contexts(value, groups, columns, here)
    elif isinstance(node, list):
        for value in node:
            yield from contexts(value, groups, columns, column)
    elif isinstance(node, str) and (m := PARAM.match(node)) and column and not m.group(2):
        yield m.group(1), column


def picks(op: MongodbOp, groups: dict[str, list[str]]) -> int:
    """How many calls the op has: the members of the group it picks from (``${g#}``)."""
    for body in refs(op):
        if body.endswith("#") and body[:-1] in groups:
            return max(1, len(groups[body[:-1]]))
    return 1


def refs(op: MongodbOp) -> Iterator[str]:
    """Every ``${...}`` body of the call (collection, keys and strings)."""
    yield from (m.group(1).strip() for m in REF.finditer(op.collection))
    for _, node in templates(op):
        yield from _refs(node)
    for key in op.sort or {}:
        yield from (m.group(1).strip() for m in REF.finditer(key))


def _refs(node: Any) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            yield from (m.group(1).strip() for m in REF.finditer(key))
            yield from _refs(value)
    elif isinstance(node, list):
        for value in node:
            yield from _refs(value)
    elif isinstance(node, str):
        yield from (m.group(1).strip() for m in REF.finditer(node))


def problem(op: MongodbOp, tables: Collection[str], groups: dict[str, list[str]],
            batch: int) -> str | None:
    """What is wrong with the slot beyond its bindings (None: nothing)."""
    shown = ", ".join(g + "*" for g in groups) or "none"
    for body in refs(op):
        if body in tables or body in ("keyspace", "final"):
            continue
        if body[-1:] in ("#", "*") and body[:-1] in groups:
            continue
        return (f"${{{body}}} is not a table ({', '.join(tables)}), keyspace or a column "
                f"group of the op's table ({shown})")
    for _, node in templates(op):
        bad = _group_misuse(node, groups)
        if bad:
            return bad
    if batch > 1 and op.call in READS:
        return (f"a batch op's mongodb call must write (insert, update, replace, delete): "
                f"{op.call} binds one row")
    if op.pipeline is not None:
        return pipeline_problem(op.pipeline)
    return None


_WRITES = ("$out", "$merge")
_READS_FROM = ("$lookup", "$graphLookup", "$unionWith")
_OWN_DB = ("${keyspace}",)


def pipeline_problem(node: Any) -> str | None:
    """An aggregate pipeline that reaches beyond the run's database: ``$out``/``$merge``
    into another database or a ``system.*`` collection, ``$lookup``/``$graphLookup``/
    ``$unionWith`` from another database or a ``system.*`` collection (e.g.
    ``system.users``); nested pipelines included. None: it stays in the database."""
    if isinstance(node, list):
        for value in node:
            if bad := pipeline_problem(value):
                return bad
        return None
    if not isinstance(node, dict):
        return None
    for stage, value in node.items():
        if stage in _WRITES or stage in _READS_FROM:
            target = _target(stage, value)
            if target is not None:
                db, coll = target
                verb = "writes to" if stage in _WRITES else "reads from"
                if db is not None and db not in _OWN_DB:
                    return (f"pipeline stage {stage} {verb} database {db!r}: an op stays in "
                            "the run's database (leave 'db' out, or write \"${keyspace}\")")
                if isinstance(coll, str) and coll.strip().startswith("system."):
                    return (f"pipeline stage {stage} {verb} {coll!r}: system collections "
                            "are not for a benchmark")
        if bad := pipeline_problem(value):
            return bad
    return None


def _target(stage: str, value: Any) -> tuple[str | None, Any] | None:
    """(database or None, collection) a stage names; None: it names none."""
    if isinstance(value, str):
        return None, value
    if not isinstance(value, dict):
        return None
    if stage in ("$lookup", "$graphLookup"):
        where = value.get("from")
    elif stage == "$unionWith":
        where = value.get("coll")
    elif stage == "$merge":
        where = value.get("into")
    else:  # $out = { db = ..., coll = ... }
        where = value
    if isinstance(where, dict):
        db = where.get("db")
        return (None if db is None else str(db)), where.get("coll")
    return None, where


def _group_misuse(node: Any, groups: dict[str, list[str]], under: str | None = None
                  ) -> str | None:
    if isinstance(node, dict):
        for key, value in node.items():
            group = group_key(key)
            if group is not None and group not in groups:
                return f"${{{group}*}} names no column group of the op's table"
            bad = _group_misuse(value, groups, group)
            if bad:
                return bad
    elif isinstance(node, list):
        for value in node:
            bad = _group_misuse(value, groups, None)
            if bad:
                return bad
    elif isinstance(node, str) and (m := PARAM.match(node)) and m.group(2):
        if m.group(1) not in groups:
            return (f":{m.group(1)}* names no column group of the op's table "
                    f"(groups: {', '.join(g + '*' for g in groups) or 'none'})")
        if under != m.group(1):
            return (f":{m.group(1)}* goes under the key \"${{{m.group(1)}*}}\": "
                    f"\"${{{m.group(1)}*}}\" = \":{m.group(1)}*\" (each member, its parameter)")
    return None
