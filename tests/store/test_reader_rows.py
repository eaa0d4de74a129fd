"""StoreReader.sql's row cap: what the SQL console asks for, and what it gets."""

from __future__ import annotations

from loadtower.store import StoreReader


def test_max_rows_fetches_at_most_that_many_in_query_order(written: dict) -> None:
    reader = StoreReader(written["path"])
    query = "SELECT ts FROM op_seconds ORDER BY ts, op"
    _cols, every = reader.sql(query)
    cols, some = reader.sql(query, max_rows=7)
    assert cols == ["ts"] and len(every) > 7
    assert some == every[:7]
    assert reader.sql(query, max_rows=len(every) + 5)[1] == every
