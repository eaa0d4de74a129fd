"""Cassandra's own figures of a node for the store's ``node_stats`` table: the
tombstones each read scanned, per table of the run's keyspaces (study 3).

Every ``interval`` s one query of ``system_views.tombstones_per_read`` (Cassandra 4.0
and later; a row per table: ``count`` reads since the node started, and ``p50th``,
``p99th``, ``max`` tombstones scanned per read from the table's decaying histogram,
where the last minute's reads weigh most) on one connection to the node alone. A table
whose count moved since the last reading (and each table once at the start) gives rows
named ``tombstones_per_read/KEYSPACE.TABLE/{reads,p50,p99,max}``; ``store/table_reads.py``
turns them into the figures beside each phase's p99.

Cassandra's tombstone histogram does not count zeroes apart: its first bucket holds 0
and 1, reported as 1 (``considerZeroes`` false in TableMetrics), so 1.0 means "0 or 1
tombstones per read"; 2.0 and more are exact bucket bounds (Cassandra's buckets grow by
about 20% from 8 on).

A node without that table (ScyllaDB, Cassandra 3) ends the sampler quietly; a node that
does not answer (stopped by a fault phase) is asked again on the next tick.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from loadtower.engines.cassandra.orchestrator.cql_query import CqlQueryError, cql_connection
from loadtower.orchestrator.db_query import QUERY_TIMEOUT_S
from loadtower.scenarios.plan import Plan

QUERY = "SELECT keyspace_name, table_name, count, p50th, p99th, max FROM " \
        "system_views.tombstones_per_read"
PREFIX = "tombstones_per_read"
INVALID_QUERY = "(0x2200)"  # the node has no such table


def keyspaces(plan: Plan) -> set[str]:
    """The run's keyspaces as CQL folds them (an unquoted name is lower case)."""
    sc = plan.scenario
    return {k.lower() for k in [sc.target.keyspace, *(t.keyspace for t in sc.targets.values())]}


def figures(rows: list[dict[str, Any]], wanted: set[str],
            last: dict[str, int]) -> dict[str, float]:
    """The rows of tables in `wanted` keyspaces whose read count is new or moved since
    `last` (table -> count, updated), as ``node_stats`` names and values."""
    out: dict[str, float] = {}
    for row in rows:
        if str(row.get("keyspace_name")) not in wanted:
            continue
        table = f"{row['keyspace_name']}.{row['table_name']}"
        count = int(row.get("count") or 0)
        if last.get(table) == count:
            continue
        last[table] = count
        out[f"{PREFIX}/{table}/reads"] = float(count)
        for name, column in (("p50", "p50th"), ("p99", "p99th"), ("max", "max")):
            if row.get(column) is not None:
                out[f"{PREFIX}/{table}/{name}"] = float(row[column])
    return out


async def node_stats(actions: Any, plan: Plan, host: str, emit: Callable[[str, dict], None],
                     interval: float, timeout: float = QUERY_TIMEOUT_S) -> None:
    """Until cancelled: every ``interval`` s the node's tombstones per read (``figures``)
    emitted as (message, data) with ``ts`` the reading's time."""
    wanted, last = keyspaces(plan), dict[str, int]()
    while True:
        try:
            async with cql_connection(actions, plan, host, timeout) as ask:
                while True:
                    started = time.monotonic()
                    try:
                        rows = await ask(QUERY)
                    except CqlQueryError as exc:
                        if INVALID_QUERY in str(exc):
                            return  # no system_views.tombstones_per_read on this node
                        raise
                    found = figures(rows, wanted, last)
                    if found:
                        tables = sorted({n.split("/")[1] for n in found})
                        emit(f"{host} tombstones per read of {', '.join(tables)}",
                             {"ts": time.time(), **found})
                    await asyncio.sleep(max(0.05, interval - (time.monotonic() - started)))
        except (TimeoutError, CqlQueryError, OSError):
            await asyncio.sleep(max(1.0, interval))  # down or restarting: ask again
