"""A workload file's validation error as one line naming file, line and key.

Like the scenario loader's (``loader.validate``), with the workload file's unions:
a generator is picked by its ``gen`` (an unknown one is named), and a union's member
tags in pydantic's error location (``literal[...]``, ``ColumnGroup``, ``int``) are not
keys of the file, so they are dropped from the key shown.
"""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from loadtower.errors import ConfigError
from loadtower.scenarios.key_suggestions import did_you_mean, known_keys
from loadtower.scenarios.loader import _first_error, _problem
from loadtower.scenarios.toml_lines import LineIndex, format_path
from loadtower.scenarios.workloads.generators import GENERATORS
from loadtower.scenarios.workloads.models import WorkloadFile


def _file_path(data: Any, loc: tuple[Any, ...], keep_last: bool) -> tuple[tuple[Any, ...], Any]:
    """The error's key path in the file and the value there (union tags dropped)."""
    path: list[Any] = []
    node: Any = data
    for i, part in enumerate(loc):
        last = i == len(loc) - 1
        if isinstance(node, dict) and part in node:
            path.append(part)
            node = node[part]
        elif isinstance(node, list) and isinstance(part, int) and part < len(node):
            path.append(part)
            node = node[part]
        elif last and keep_last:
            path.append(part)
            node = None
        # else: a union member's tag, not a key
    return tuple(path), node


def validate_workload(data: dict[str, Any], source: str, file: str) -> WorkloadFile:
    try:
        return WorkloadFile.model_validate(data)
    except ValidationError as exc:
        error = _first_error(exc)
    loc = tuple(error["loc"])
    kind = error["type"]
    is_key = bool(loc) and loc[-1] == "[key]"
    if is_key:
        loc = loc[:-1]
    path, value = _file_path(data, loc, kind in ("missing", "extra_forbidden") or is_key)
    if is_key:
        value = path[-1] if path else None
    if kind in ("union_tag_invalid", "union_tag_not_found"):
        path = (*path, "gen")
        given = value.get("gen") if isinstance(value, dict) else None
        problem = (f"unknown generator {given!r}" if kind == "union_tag_invalid"
                   else "missing 'gen'") + f" (one of: {', '.join(GENERATORS)})"
        if given is not None:
            problem += did_you_mean(str(given), list(GENERATORS))
    else:
        problem = _problem(error, value, is_key)
        if kind == "extra_forbidden" and loc:
            problem += did_you_mean(str(loc[-1]), known_keys(WorkloadFile, loc[:-1]))
    line = LineIndex(source).line_of(path) if path else None
    if line is None and source:
        line = 1
    raise ConfigError(file, line, format_path(path) or None, problem) from None
