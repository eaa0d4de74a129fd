"""Workload-file commands on Redis (``agents/workload/file_ops.py``): each op's rendered
commands (``call_spec.py``) in one pipeline through the session's asyncio client, every
failure under the stable classes of ``errors.py``.

- Arguments are compiled once at prepare: ``{"$param": name}`` takes the row's value as
  Redis takes it (text and numbers as they are, bytes for a blob, a boolean as 1 or 0, a
  uuid, timestamp or date as its text), ``{"$join": [...]}`` its parts joined as text.
- One row: its commands in one pipeline (no transaction: one round trip); N rows
  (``batch = N``, or a load's block): every row's commands in one pipeline. Then, with
  ``each``, that command once per member of the last reply in a second pipeline (a
  scan's reads).
- What an op found, for ``expect = "rows"``: its last reply (an empty hash, a missing
  value, 0 or an empty list is a miss, ``NoRows``); with ``each``, the replies that are
  not empty.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, datetime
from typing import Any, cast

from loadtower.agents.workload.file_ops import Row
from loadtower.engines.redis.agent.call_spec import EACH, JOIN, RedisCallSpec
from loadtower.engines.redis.agent.session import guarded
from loadtower.protocol.workload_file_spec import PARAM_MARK, StatementSpec

Build = Callable[[Row, Any], Any]  # (row, the reply's member for `each`) -> argument


def value(v: Any) -> Any:
    """A row's value as a Redis argument."""
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, str | bytes | int | float):
        return v
    if isinstance(v, bytearray | memoryview):
        return bytes(v)
    if isinstance(v, datetime | date):
        return v.isoformat()
    return "" if v is None else str(v)


def _text(v: Any) -> str:
    v = value(v)
    return v.decode("utf-8", "replace") if isinstance(v, bytes) else str(v)


def compile_arg(arg: Any) -> Build:
    if isinstance(arg, dict) and PARAM_MARK in arg:
        name = str(arg[PARAM_MARK])
        return lambda row, _member: value(row[name])
    if isinstance(arg, dict) and JOIN in arg:
        parts = [compile_arg(a) for a in arg[JOIN]]
        return lambda row, member: "".join(_text(p(row, member)) for p in parts)
    if isinstance(arg, dict) and EACH in arg:
        return lambda _row, member: member
    return lambda _row, _member: arg  # text or a number (immutable)


class Call:
    """One rendered op, compiled."""

    def __init__(self, spec: RedisCallSpec) -> None:
        self.commands = [[compile_arg(a) for a in command] for command in spec["commands"]]
        each = spec.get("each")
        self.each = [compile_arg(a) for a in each] if each is not None else None

    async def run(self, session: Any, rows: list[Row]) -> Any:
        pipe = session.pipeline()
        for row in rows:
            for command in self.commands:
                pipe.execute_command(*(build(row, None) for build in command))
        replies = await pipe.execute()
        if self.each is None:
            return replies[-1] if len(rows) == 1 else len(rows)
        members = replies[-1] or []
        if not members:
            return []
        pipe = session.pipeline()
        for member in members:
            pipe.execute_command(*(build(rows[0], member) for build in self.each))
        return [r for r in await pipe.execute() if r]


class RedisFileRunner:
    def __init__(self, session: Any) -> None:
        self.session = session
        self.calls: dict[str, Call] = {}

    async def prepare(self, statements: dict[str, StatementSpec]) -> None:
        """Compile each op's commands (Redis has nothing to wait for: no schema)."""
        for name, statement in statements.items():
            spec = statement.get("call")
            if spec is None or "commands" not in spec:
                raise ValueError(f"statement {name} has no redis commands (rendered for "
                                 "another engine)")
            self.calls[name] = Call(cast(RedisCallSpec, spec))

    def send(self, name: str, statement: StatementSpec, rows: list[Row]) -> Any:
        return guarded(self.calls[name].run(self.session, rows))

    def found(self, result: Any) -> bool:
        return bool(result)
