"""The core's half of rendering an engine's own call form (StatementSpec's ``call``, for
an engine whose statements are no text): parameters become ``{"$param": name}`` marks
in the order they are first bound, and ``${...}`` references in text resolve as in every
statement (``${keyspace}``, ``${final}`` (nothing here), ``${g#}`` the picked member,
``${g*}`` the members joined with ", ", ``${t}`` a table's name on the target)."""

from __future__ import annotations

import re

from loadtower.protocol.workload_file_spec import PARAM_MARK
from loadtower.scenarios.workloads.render_statements import Names

REF = re.compile(r"\$\{([^{}]*)\}")


class CallMarks:
    def __init__(self, names: Names, groups: dict[str, list[str]], picked: int) -> None:
        self.names, self.groups, self.picked = names, groups, picked
        self.binds: list[str] = []  # the parameters, in the order they were first marked

    def mark(self, name: str) -> dict[str, str]:
        if name not in self.binds:
            self.binds.append(name)
        return {PARAM_MARK: name}

    def text(self, s: str) -> str:
        def one(m: re.Match[str]) -> str:
            body = m.group(1).strip()
            if body == "keyspace":
                return self.names.keyspace
            if body == "final":
                return ""
            if body[-1:] == "#" and body[:-1] in self.groups:
                return self.groups[body[:-1]][self.picked]
            if body[-1:] == "*" and body[:-1] in self.groups:
                return ", ".join(self.groups[body[:-1]])
            return self.names.tables.get(body, body)

        return REF.sub(one, s)
