"""A workload file on Redis: each op's ``redis`` slot rendered as the commands the agent
sends (``agent/call_spec.py``), the text ``loadtower check`` prints of them, and what the
checks ask of the slot (file_slot.py says how arguments are written). Redis has no
schema: no DDL, and a file's table is its name on the target (the ycsb file keeps a
sorted set of its keys under it, for scans)."""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterator
from typing import Any

from loadtower.engines.redis.agent.call_spec import EACH, JOIN, RedisCallSpec
from loadtower.engines.redis.orchestrator.file_slot import Pairs, RedisOp
from loadtower.protocol.workload_file_spec import PARAM_MARK, StatementSpec
from loadtower.scenarios.models import Target
from loadtower.scenarios.workloads.call_marks import CallMarks
from loadtower.scenarios.workloads.checks import Checked
from loadtower.scenarios.workloads.render_statements import Names

PARAM = re.compile(r"^:([A-Za-z_][A-Za-z0-9_]*)(\*?)$")
REF = re.compile(r"\$\{([^{}]*)\}")
EACH_TEXT = "$each"
# commands of the server, not of the data: a workload file never sends them
SERVER_COMMANDS = frozenset({
    "ACL", "AUTH", "BGREWRITEAOF", "BGSAVE", "CLIENT", "CLUSTER", "CONFIG", "DEBUG",
    "FAILOVER", "FLUSHALL", "FLUSHDB", "FUNCTION", "HELLO", "KEYS", "MIGRATE", "MODULE",
    "MONITOR", "MOVE", "PSYNC", "QUIT", "REPLICAOF", "RESET", "SAVE", "SCRIPT", "SELECT",
    "SHUTDOWN", "SLAVEOF", "SWAPDB", "SYNC", "WAIT",
})  # fmt: skip


def _args(op: RedisOp) -> Iterator[tuple[bool, Any]]:
    """(in `each`, argument) of every command, in order."""
    for command in op.commands:
        for arg in command:
            yield False, arg
    for arg in op.each or []:
        yield True, arg


def _refs(text: str) -> list[str]:
    return [m.group(1).strip() for m in REF.finditer(text)]


def _texts(arg: Any) -> list[str]:
    """The text parts of an argument (a list's parts; none for numbers and pairs)."""
    if isinstance(arg, str):
        return [arg]
    if isinstance(arg, list):
        return [a for a in arg if isinstance(a, str)]
    return []


class RedisRendering:
    """The `WorkloadRendering` of the ``redis`` slot (scenarios/workloads/rendering.py)."""

    slot = "redis"

    # -- the checks ------------------------------------------------------------------------
    def op_table(self, statement: Any, tables: Collection[str]) -> str | None:
        for _, arg in _args(statement):
            for text in _texts(arg):
                named = next((r for r in _refs(text) if r in tables), None)
                if named is not None:
                    return named
        return None

    def problem(self, statement: Any, tables: Collection[str], groups: dict[str, list[str]],
                rows: int) -> str | None:
        op: RedisOp = statement
        shown = ", ".join(g + "*" for g in groups) or "none"
        for command in [*op.commands, *([op.each] if op.each else [])]:
            name = command[0]
            if not isinstance(name, str) or PARAM.match(name) or REF.search(name):
                return f"a command's first argument is its name, as text: not {name!r}"
            if name.upper() in SERVER_COMMANDS:
                return (f"{name.upper()} is a command of the server, not of the data: a "
                        "workload file does not send it")
        for in_each, arg in _args(op):
            if isinstance(arg, Pairs) and arg.pairs[:-1] not in groups:
                return f"pairs = {arg.pairs!r} names no column group of the op's table ({shown})"
            for text in _texts(arg):
                if text == EACH_TEXT and not in_each:
                    return "$each is one member of the last reply: it goes in `each` only"
                m = PARAM.match(text)
                if m and m.group(2) and m.group(1) not in groups:
                    return f":{m.group(1)}* names no column group of the op's table ({shown})"
                if m and m.group(2) and isinstance(arg, list):
                    return f":{m.group(1)}* is several arguments: not inside a joined one"
                for body in _refs(text):
                    if body in tables or body == "keyspace":
                        continue
                    if body[-1:] == "#" and body[:-1] in groups:
                        continue
                    if body[-1:] == "*" and body[:-1] in groups and text == f"${{{body}}}" \
                            and not isinstance(arg, list):
                        continue
                    return (f"${{{body}}} is not a table ({', '.join(tables)}), keyspace or "
                            f"a column group of the op's table ({shown}; ${{g*}} stands "
                            "alone as an argument)")
        if op.each is not None and rows > 1:
            return "a batch op's redis commands cannot read each member of a reply (each)"
        return None

    def params(self, statement: Any, groups: dict[str, list[str]]) -> list[str]:
        found: dict[str, None] = {}
        for _, arg in _args(statement):
            if isinstance(arg, Pairs):
                found.update(dict.fromkeys(groups.get(arg.pairs[:-1], [])))
            for text in _texts(arg):
                m = PARAM.match(text)
                if m:
                    found.update(dict.fromkeys(
                        groups.get(m.group(1), []) if m.group(2) else [m.group(1)]))
        return list(found)

    def contexts(self, statement: Any, groups: dict[str, list[str]], columns: dict[str, str]
                 ) -> Iterator[tuple[str, str]]:
        """A group's pairs (each member's parameter is that column's), and ``:p`` after a
        column's name or ``${g#}`` (HSET key field :value)."""
        op: RedisOp = statement
        for command in [*op.commands, *([op.each] if op.each else [])]:
            before: Any = None
            for arg in command:
                if isinstance(arg, Pairs):
                    yield from ((m, m) for m in groups.get(arg.pairs[:-1], []))
                m = PARAM.match(arg) if isinstance(arg, str) else None
                if m and not m.group(2) and isinstance(before, str):
                    ref = REF.fullmatch(before)
                    if before in columns:
                        yield m.group(1), before
                    elif ref and ref.group(1)[-1:] == "#" and ref.group(1)[:-1] in groups:
                        yield m.group(1), groups[ref.group(1)[:-1]][0]
                before = arg

    # -- the rendering for a target --------------------------------------------------------
    def names(self, checked: Checked, keyspace: str, tables: dict[str, str] | None,
              target: Target) -> Names:
        return Names(keyspace, dict(tables or {}))

    def ddl(self, checked: Checked, target: Target, names: Names) -> list[str]:
        return []

    def qualified(self, names: Names, table: str) -> str:
        return names.tables.get(table, table)

    def statements(self, checked: Checked, names: Names) -> dict[str, list[StatementSpec]]:
        out: dict[str, list[StatementSpec]] = {}
        for name, op in checked.model.ops.items():
            slot = op.statement(self.slot)
            if not isinstance(slot, RedisOp):
                continue
            groups = checked.model.tables[checked.op_tables[name]].groups()
            types = checked.param_types[name]
            calls = []
            for picked in range(_picks(slot, groups)):
                render = _Render(names, groups, picked)
                spec: RedisCallSpec = {"commands": [render.command(c) for c in slot.commands]}
                if slot.each is not None:
                    spec["each"] = render.command(slot.each)
                calls.append(StatementSpec(
                    text=text_of(spec), binds=list(render.binds), insert_rows=False,
                    types={b: types[b] for b in render.binds if b in types}, call=dict(spec)))
            out[name] = calls
        return out


def _picks(op: RedisOp, groups: dict[str, list[str]]) -> int:
    """How many command sets the op has: the members of the group it picks from
    (``${g#}``), else 1."""
    for _, arg in _args(op):
        for text in _texts(arg):
            for body in _refs(text):
                if body[-1:] == "#" and body[:-1] in groups:
                    return max(1, len(groups[body[:-1]]))
    return 1


class _Render(CallMarks):
    """Commands' arguments with their marks and references (call_marks.py)."""

    def command(self, args: list[Any]) -> list[Any]:
        out: list[Any] = []
        for arg in args:
            if isinstance(arg, Pairs):
                for member in self.groups[arg.pairs[:-1]]:
                    out += [member, self.mark(member)]
            elif isinstance(arg, list):
                out.append({JOIN: [self.part(a) for a in arg]})
            elif isinstance(arg, str):
                out += self.whole(arg)
            else:
                out.append(arg)
        return out

    def part(self, text: str) -> Any:
        m = PARAM.match(text)
        return self.mark(m.group(1)) if m else self.text(text)

    def whole(self, text: str) -> list[Any]:
        """One argument written as text: several for ``:g*`` and ``${g*}``."""
        if text == EACH_TEXT:
            return [{EACH: 1}]
        m = PARAM.match(text)
        if m:
            return [self.mark(p) for p in (self.groups[m.group(1)] if m.group(2) else
                                           [m.group(1)])]
        ref = REF.fullmatch(text)
        if ref and ref.group(1).strip()[-1:] == "*":
            return list(self.groups[ref.group(1).strip()[:-1]])
        return [self.text(text)]


def shown(arg: Any) -> str:
    """An argument as check prints it: a parameter as ``:name``, a joined one's parts with
    ``+`` (its text quoted)."""
    if isinstance(arg, dict) and PARAM_MARK in arg:
        return f":{arg[PARAM_MARK]}"
    if isinstance(arg, dict) and JOIN in arg:  # "user:"+:id
        return "+".join(shown(a) if isinstance(a, dict) else json.dumps(a) for a in arg[JOIN])
    if isinstance(arg, dict) and EACH in arg:
        return EACH_TEXT
    text = str(arg)
    return text if text and not any(c.isspace() for c in text) else repr(text)


def text_of(spec: RedisCallSpec) -> str:
    """``HSET :y_id field0 :field0 | ZADD usertable 0 :y_id``: the commands of one op, and
    ``then for each member: HGETALL $each`` for a scan."""
    text = " | ".join(" ".join(shown(a) for a in c) for c in spec["commands"])
    if "each" in spec:
        text += " ; for each member: " + " ".join(shown(a) for a in spec["each"])
    return text


RENDERING = RedisRendering()
