"""A joined node's own record of its Bootstrap streams (the engines' ``bootstrap_streams``
hook, asked by the ``scale_out`` phase once the node is UN).

Cassandra 4.1+ keeps ``system_views.streaming``: a row per stream operation with its
status, duration, bytes and files received. A node without that table (an older
Cassandra, ScyllaDB) answers an invalid query: it keeps no such record.
"""

from __future__ import annotations

from typing import Any

from loadtower.engines.cassandra.orchestrator.cql_query import cql_rows
from loadtower.scenarios.engine_hooks import NoRecord
from loadtower.scenarios.plan import Plan

STREAMS_CQL = (
    "SELECT operation, status, duration_millis, bytes_received, files_received "
    "FROM system_views.streaming"
)
SOURCE = "system_views.streaming"
INVALID_QUERY = "(0x2200)"  # the server's answer when it has no such table


def bootstrap_record(rows: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The Bootstrap rows' duration (the longest), statuses, bytes and files, or None when
    there are none."""
    boot = [r for r in rows if str(r.get("operation") or "").lower() == "bootstrap"]
    if not boot:
        return None
    return {
        "streaming_duration_s": round(max(int(r["duration_millis"] or 0) for r in boot) / 1000, 3),
        "streaming_status": ",".join(sorted({str(r.get("status")) for r in boot})),
        "streamed_bytes": sum(int(r.get("bytes_received") or 0) for r in boot),
        "streamed_files": sum(int(r.get("files_received") or 0) for r in boot),
    }


async def bootstrap_streams(
    actions: Any, plan: Plan, host: str, timeout: float
) -> dict[str, Any] | None:
    """Node `host`'s record of its Bootstrap streams (``bootstrap_record``, with where it
    comes from: ``streaming_source``); NoRecord when it has no ``system_views.streaming``;
    other errors when it does not answer (yet)."""
    try:
        rows = await cql_rows(actions, plan, host, STREAMS_CQL, timeout)
    except Exception as exc:
        if INVALID_QUERY in str(exc):
            raise NoRecord(str(exc)) from None
        raise
    found = bootstrap_record(rows)
    return None if found is None else {**found, "streaming_source": SOURCE}
