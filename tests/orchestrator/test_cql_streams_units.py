"""The CQL engines' `bootstrap_streams` hook (engines/cassandra/orchestrator/streams.py): a
joined node's Bootstrap rows of system_views.streaming as the scale_out phase's figures;
NoRecord when the node has no such table, other errors as they are."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from loadtower.engines.cassandra.orchestrator import streams
from loadtower.engines.cassandra.orchestrator.cql_query import CqlQueryError
from loadtower.scenarios.engine_hooks import NoRecord, hook


def _row(operation: str, millis: int | None, status: str = "success") -> dict[str, Any]:
    return {"operation": operation, "status": status, "duration_millis": millis,
            "bytes_received": 1000, "files_received": 2}


def test_the_bootstrap_rows_make_the_record() -> None:
    rows = [_row("Bootstrap", 4200), _row("bootstrap", None, "start"), _row("Repair", 9000)]
    assert streams.bootstrap_record(rows) == {
        "streaming_duration_s": 4.2, "streaming_status": "start,success",
        "streamed_bytes": 2000, "streamed_files": 4}
    assert streams.bootstrap_record([_row("Repair", 9000)]) is None
    assert streams.bootstrap_record([]) is None


def _asking(monkeypatch: pytest.MonkeyPatch, answer: Any) -> list[str]:
    asked: list[str] = []

    async def cql_rows(actions: Any, plan: Any, host: str, cql: str,
                       timeout: float) -> list[dict[str, Any]]:
        asked.append(cql)
        if isinstance(answer, BaseException):
            raise answer
        return list(answer)

    monkeypatch.setattr(streams, "cql_rows", cql_rows)
    return asked


def test_the_hook_asks_the_streaming_table(monkeypatch: pytest.MonkeyPatch) -> None:
    asked = _asking(monkeypatch, [_row("Bootstrap", 1500)])
    found = asyncio.run(streams.bootstrap_streams(None, None, "db2", 10.0))
    assert found is not None and found["streaming_duration_s"] == 1.5
    assert found["streaming_source"] == "system_views.streaming"  # said by the engine
    assert asked == [streams.STREAMS_CQL]


def test_no_such_table_is_no_record_other_errors_stay(
    monkeypatch: pytest.MonkeyPatch
) -> None:
    invalid = CqlQueryError("querying ... on 127.0.0.2:9042: unknown table streaming (0x2200)")
    _asking(monkeypatch, invalid)
    with pytest.raises(NoRecord, match=r"unknown table streaming \(0x2200\)"):
        asyncio.run(streams.bootstrap_streams(None, None, "db2", 10.0))
    _asking(monkeypatch, CqlQueryError("connecting to 127.0.0.2:9042: refused"))
    with pytest.raises(CqlQueryError, match="refused"):
        asyncio.run(streams.bootstrap_streams(None, None, "db2", 10.0))


def test_both_cql_engines_declare_the_hook() -> None:
    assert hook("cassandra", "bootstrap_streams") is streams.bootstrap_streams
    assert hook("scylla", "bootstrap_streams") is streams.bootstrap_streams
