"""CQL names: keyspace and table names quoted for a statement, a keyspace's replication.

The tables and statements of every workload, the built-in ones too, are their workload
files rendered for the target (scenarios/workloads/, scenarios/builtin/workloads/)."""

from __future__ import annotations

import re

_UNQUOTED = re.compile(r"[A-Za-z][A-Za-z0-9_]*")


def cql_name(name: str) -> str:
    """A keyspace or table name for a CQL statement: an unquoted identifier as it is (CQL
    folds it to lower case), anything else double-quoted with its case folded the same
    way, so that no name can end the statement or add another one."""
    if _UNQUOTED.fullmatch(name):
        return name
    return '"' + name.lower().replace('"', '""') + '"'


def replication_map(rf: int | dict[str, int]) -> str:
    """SimpleStrategy with ``rf`` replicas, or NetworkTopologyStrategy with so many per
    data centre (names checked by the scenario model: letters, digits, ``_-.``)."""
    if isinstance(rf, dict):
        per_dc = ", ".join(f"'{dc}': {int(n)}" for dc, n in rf.items())
        return f"{{'class': 'NetworkTopologyStrategy', {per_dc}}}"
    return f"{{'class': 'SimpleStrategy', 'replication_factor': {int(rf)}}}"
