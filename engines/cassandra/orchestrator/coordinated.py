"""The requests a Cassandra node coordinated (the engines' ``coordinated`` hook, read at
each phase's start and end by ``orchestrator/coordinators.py``).

Cassandra 5.0's virtual tables ``system_views.coordinator_read_latency``,
``coordinator_write_latency`` and ``coordinator_scan_latency`` keep, per table, the
count of reads, writes and range scans that node coordinated since it started (the
coordinator's own metrics: a client's requests are counted at the node they were sent
to, whoever holds the replicas). ``system_views.clients.request_count`` was not used: it
counts per client connection and is lost when a connection closes (between two phases,
say), and it also counts the orchestrator's own queries. ScyllaDB has no such tables:
its kind declares no ``coordinated`` hook.

The node is asked alone, on one connection (``cql_query.py``, no peer discovery).
"""

from __future__ import annotations

from typing import Any

from loadtower.engines.cassandra.orchestrator.cql_query import cql_queries
from loadtower.scenarios.plan import Plan

TABLES = ("coordinator_read_latency", "coordinator_write_latency", "coordinator_scan_latency")


def queries(keyspace: str, table: str | None) -> list[str]:
    """One query per coordinator table: the counts of the keyspace's tables (or one)."""
    escaped = keyspace.replace("'", "''")
    where = f"keyspace_name = '{escaped}'"
    if table:
        where += f" AND table_name = '{table.replace(chr(39), chr(39) * 2)}'"
    return [f"SELECT count FROM system_views.{t} WHERE {where}" for t in TABLES]


def total(results: list[list[dict[str, Any]]]) -> int:
    """The sum of the counts of every query's rows."""
    return sum(int(row.get("count") or 0) for rows in results for row in rows)


async def coordinated(actions: Any, plan: Plan, host: str, timeout: float) -> int:
    """The requests node `host` coordinated since it started on the plan's target keyspace
    (and table, when the target names one)."""
    target = plan.scenario.target
    return total(await cql_queries(actions, plan, host, queries(target.keyspace, target.table),
                                   timeout))
