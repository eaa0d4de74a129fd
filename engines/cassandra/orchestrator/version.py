"""Cassandra's and ScyllaDB's server version for the run's record (the engines' ``version``
hook): ``release_version`` from ``system.local``, and ScyllaDB's own version from
``system.versions`` where it has one."""

from __future__ import annotations

import contextlib
from typing import Any

from loadtower.engines.cassandra.orchestrator.cql_query import cql_rows
from loadtower.orchestrator.db_query import QUERY_TIMEOUT_S
from loadtower.scenarios.plan import Plan


async def version(
    actions: Any, plan: Plan, host: str, timeout: float = QUERY_TIMEOUT_S
) -> dict[str, Any]:
    """``{"version": ...}`` of CQL host `host` (Cassandra's ``release_version``)."""
    rows = await cql_rows(actions, plan, host, "SELECT release_version FROM system.local",
                          timeout)
    return {"version": rows[0]["release_version"] if rows else None}


async def scylla_version(
    actions: Any, plan: Plan, host: str, timeout: float = QUERY_TIMEOUT_S
) -> dict[str, Any]:
    """Its ``release_version`` and ScyllaDB's own version (``scylla_version``), where the node
    has one."""
    found = await version(actions, plan, host, timeout)
    with contextlib.suppress(Exception):
        more = await cql_rows(actions, plan, host, "SELECT version FROM system.versions",
                              timeout)
        found["scylla_version"] = more[0]["version"] if more else None
    return found
