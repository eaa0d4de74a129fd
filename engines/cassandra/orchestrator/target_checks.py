"""The ``check_target`` hook of Cassandra and ScyllaDB (``loadtower check``): a CQL
target's keyspace and tables are CQL identifiers (stricter than other engines' names)."""

from __future__ import annotations

import re

from loadtower.scenarios.models import Scenario
from loadtower.scenarios.toml_lines import Path

# CQL's unquoted identifier, at most 48 characters (Cassandra's limit for keyspace and
# table names); unquoted CQL names are case-insensitive: ``MyKs`` is the keyspace ``myks``
CQL_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,47}")
CQL_RULE = "CQL's unquoted identifier: a letter, then letters, digits or _ (at most 48)"


def cql_name_problem(value: str) -> str | None:
    """Why `value` cannot be an unquoted CQL keyspace or table name, or None."""
    if CQL_NAME.fullmatch(value):
        return None
    return f"invalid CQL name {value!r}: expected {CQL_RULE}"


def check_target(scenario: Scenario, single: Scenario, where: Path) -> tuple[Path, str] | None:
    """(key path, problem) of the first name CQL cannot take, or None."""
    names: list[tuple[Path, str | None]] = [
        ((*where, "keyspace"), single.target.keyspace),
        ((*where, "table"), single.target.table),
    ]
    names += [(("workloads", w, "table"), scenario.workloads[w].table) for w in scenario.workloads]
    for path, value in names:
        problem = cql_name_problem(value) if value is not None else None
        if problem:
            return path, problem
    return None
