"""The ``check_target`` hook of Cassandra and ScyllaDB (``loadtower check``): a CQL
target's keyspace and tables are CQL identifiers (stricter than other engines' names)."""

from __future__ import annotations

from loadtower.scenarios.identifiers import cql_name_problem
from loadtower.scenarios.models import Scenario
from loadtower.scenarios.toml_lines import Path


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
