"""hdr_percentile / hdr_percentiles: exact percentiles over any window in users' own SQL.

The results are compared with the percentiles of the raw latencies the synthetic agents
drew (within HDR's 3 significant digits) and with StoreReader.window_percentiles.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loadtower.errors import LoadtowerError
from loadtower.store import StoreReader
from tests.store.conftest import SECONDS
from tests.store.synth import OPS, T0, percentile_us
from tests.store.test_percentiles import close

WINDOW_SQL = """SELECT hdr_percentiles(list(response_hist), [50, 90, 99, 100]) FROM op_second
WHERE run_id = ? AND op = ? AND ts >= ? AND ts < ?"""


class Written(dict):
    """The shared store's facts, with a short repr (hypothesis prints its arguments)."""

    def __repr__(self) -> str:
        return f"Written({self['path']})"


@pytest.fixture(scope="module")
def data(written: dict) -> Written:
    return Written(written)


def raw_values(written: dict, op: str, start: int, end: int) -> list[int]:
    return [v for (ts, o), vs in written["raw"].items() if o == op and start <= ts < end
            for v in vs]  # fmt: skip


def window(reader: StoreReader, sql: str) -> list[tuple]:
    return reader.sql(sql)[1]


def quoted(sql: str, *params: object) -> str:
    """`?` -> literal (StoreReader.sql takes one finished statement, as a user types it)."""
    for p in params:
        sql = sql.replace("?", f"'{p}'" if isinstance(p, str) else str(p), 1)
    return sql


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    start=st.integers(T0 - 5, T0 + SECONDS),
    length=st.integers(1, SECONDS + 10),
    op=st.sampled_from(OPS),
)
def test_any_window_equals_the_merged_raw_latencies(
    data: Written, start: int, length: int, op: str
) -> None:
    written = data
    reader = StoreReader(written["path"])
    end = start + length
    (got,) = window(reader, quoted(WINDOW_SQL, written["run_id"], op, start, end))[0]
    values = raw_values(written, op, start, end)
    if not values:
        assert got is None  # no rows: list() is NULL
        return
    for value, pct in zip(got, (50.0, 90.0, 99.0, 100.0), strict=True):
        exact = max(values) if pct == 100.0 else percentile_us(values, pct)
        assert close(value, exact), (pct, value, exact)
    # the same figures as the Python path (minute rollups + second edges)
    py = reader.window_percentiles(written["run_id"], start, end, op=op)
    assert got == [py["p50_ms"], py["p90_ms"], py["p99_ms"], py["max_ms"]]


def test_group_by_op_the_documented_way(written: dict) -> None:
    reader = StoreReader(written["path"])
    start, end = T0 + 17, T0 + 101  # crosses a minute boundary, starts and ends mid-minute
    rows = window(reader, f"""
        SELECT op, hdr_percentile(list(response_hist), 99) AS p99_ms,
               hdr_percentile(list(service_hist), 99) AS service_p99_ms, sum(ops) AS ops
        FROM op_second WHERE run_id = '{written["run_id"]}' AND ts BETWEEN {start} AND {end - 1}
        GROUP BY op ORDER BY op""")
    assert [r[0] for r in rows] == sorted(OPS)
    for op, p99, service_p99, ops in rows:
        values = raw_values(written, op, start, end)
        assert close(p99, percentile_us(values, 99.0))
        assert service_p99 <= p99  # service time excludes the wait before the send
        assert ops >= len(values)


def test_minute_rollups_plus_edges_give_the_same_result(written: dict) -> None:
    """The docs' long-window form: whole minutes from op_minute, the edges from op_second."""
    reader = StoreReader(written["path"])
    run_id, start, end = written["run_id"], T0 + 7, T0 + 128
    lo, hi = -(-start // 60) * 60, end // 60 * 60
    assert lo < hi  # at least one whole minute inside
    long_form = f"""
        SELECT op, hdr_percentile(list(h), 99.9) FROM (
            SELECT op, response_hist AS h FROM op_minute
            WHERE run_id = '{run_id}' AND ts >= {lo} AND ts < {hi}
            UNION ALL
            SELECT op, response_hist FROM op_second
            WHERE run_id = '{run_id}' AND ts >= {start} AND ts < {end}
              AND NOT (ts >= {lo} AND ts < {hi}))
        GROUP BY op ORDER BY op"""
    seconds_only = f"""
        SELECT op, hdr_percentile(list(response_hist), 99.9) FROM op_second
        WHERE run_id = '{run_id}' AND ts >= {start} AND ts < {end} GROUP BY op ORDER BY op"""
    assert window(reader, long_form) == window(reader, seconds_only)


def test_nulls_empty_and_bad_input(written: dict) -> None:
    reader = StoreReader(written["path"])
    assert window(reader, "SELECT hdr_percentile([], 99), hdr_percentile(NULL, 99)") == [
        (None, None)]  # fmt: skip
    one = "(SELECT response_hist FROM op_second ORDER BY ts, op LIMIT 1)"
    with_null = window(reader, f"SELECT hdr_percentile([{one}, NULL], 99), "
                               f"hdr_percentile([{one}], 99)")  # fmt: skip
    assert with_null[0][0] == with_null[0][1] is not None
    for pct in (-1, 100.5, "'nan'::DOUBLE"):
        with pytest.raises(LoadtowerError, match="between 0 and 100"):
            reader.sql(f"SELECT hdr_percentile([{one}], {pct})")
    with pytest.raises(LoadtowerError, match="not a loadtower histogram BLOB"):
        reader.sql("SELECT hdr_percentile(['not a histogram'::BLOB], 50)")


def test_available_in_loadtower_sql(written: dict) -> None:
    query = (f"SELECT op, hdr_percentile(list(response_hist), 99) AS p99_ms FROM op_second "
             f"WHERE run_id = '{written['run_id']}' GROUP BY op ORDER BY op")  # fmt: skip
    cmd = [sys.executable, "-m", "loadtower", "sql", "--store", str(written["path"]), query,
           "--format", "json"]  # fmt: skip
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    rows = json.loads(done.stdout)
    assert [r["op"] for r in rows] == sorted(OPS)
    for row in rows:
        assert close(row["p99_ms"], percentile_us(raw_values(written, row["op"], 0, 2**40), 99.0))
