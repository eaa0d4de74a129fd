"""``[vars]``: a workload file's own settings, ``${name}`` in any string.

A string that is exactly ``"${name}"`` becomes the variable's value with its type
(``length = "${field_size}"`` is the number); inside a longer string the value's text
is put in. A scenario sets them (``[workloads.NAME] vars = {...}``; ``records``,
``fields`` and ``field_size`` also from its ``[dataset]``). ``${...}`` that is not a
variable stays for the statements: a table of the file, ``keyspace``, ``final`` or a
column group (docs/workloads.md).
"""

from __future__ import annotations

import re
from typing import Any

from loadtower.errors import ConfigError
from loadtower.scenarios.toml_lines import LineIndex, format_path

_REF = re.compile(r"\$\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}")
STATEMENT_NAMES = frozenset({"keyspace", "final"})
Scalar = str | int | float | bool


def text_of(value: Scalar) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def substitute(
    data: dict[str, Any], overrides: dict[str, Scalar], source: str, file: str
) -> dict[str, Any]:
    """`data` with every ``${var}`` replaced; an unknown name is an error (file, line, key)."""
    declared = data.get("vars", {})
    if not isinstance(declared, dict):
        return data
    values: dict[str, Any] = {**declared, **overrides}
    tables = data.get("tables")
    known = set(values) | STATEMENT_NAMES | (set(tables) if isinstance(tables, dict) else set())
    index = LineIndex(source)

    def walk(node: Any, path: tuple[str | int, ...]) -> Any:
        if isinstance(node, dict):
            return {k: walk(v, (*path, k)) for k, v in node.items()}
        if isinstance(node, list):
            return [walk(v, (*path, i)) for i, v in enumerate(node)]
        if not isinstance(node, str):
            return node
        for m in _REF.finditer(node):
            if m.group(1) not in known:
                raise ConfigError(
                    file, index.line_of(path), format_path(path),
                    f"unknown name ${{{m.group(1)}}}: not a variable of [vars] "
                    f"({', '.join(values) or 'none'}), a table, keyspace or final",
                )
        whole = _REF.fullmatch(node)
        if whole and whole.group(1) in values:
            return values[whole.group(1)]
        return _REF.sub(
            lambda m: text_of(values[m.group(1)]) if m.group(1) in values else m.group(0), node
        )

    out = {k: (v if k == "vars" else walk(v, (k,))) for k, v in data.items()}
    out["vars"] = values
    return out
