"""The views' percentiles equal the percentiles of the merged raw latencies (HDR precision)."""

from __future__ import annotations

import pytest

from loadtower.store import StoreReader, StoreWriter
from tests.store.synth import T0, make_lines, percentile_us

PCTS = {"p50_ms": 50.0, "p90_ms": 90.0, "p99_ms": 99.0, "max_ms": 100.0}


def close(stored_ms: float, exact_us: int) -> bool:
    """Within HDR's 3 significant digits (bucket width <= 1/1024 of the value)."""
    return abs(stored_ms * 1000 - exact_us) <= max(1.0, exact_us / 1000)


def check(row: dict, values: list[int]) -> None:
    for col, pct in PCTS.items():
        exact = max(values) if pct == 100.0 else percentile_us(values, pct)
        assert close(row[col], exact), (col, row[col], exact)


def test_op_seconds_are_merged_across_agents(written: dict) -> None:
    reader = StoreReader(written["path"])
    rows = reader.op_seconds(written["run_id"])
    assert len(rows) == len(written["raw"])
    for row in rows[::7]:
        check(row, written["raw"][(row["ts"], row["op"])])
    first = [ln for ln in written["lines"] if ln["ts"] == T0]
    assert rows[0]["ops"] == sum(ln["ops"][rows[0]["op"]]["ops"] for ln in first)


def test_phase_summary_and_sql_view_agree_with_raw(written: dict) -> None:
    reader = StoreReader(written["path"])
    summary = reader.phase_summary(written["run_id"])
    assert {r["op"] for r in summary} == {"read", "update", "insert"}
    for row in summary:
        values = [v for (_, op), vs in written["raw"].items() if op == row["op"] for v in vs]
        check(row, values)
    cols, rows = reader.sql("SELECT op, p99_ms FROM phase_summary ORDER BY op")
    assert cols == ["op", "p99_ms"] and len(rows) == 3


@pytest.mark.parametrize("start,end", [(T0, T0 + 130), (T0 + 50, T0 + 125), (T0 + 3, T0 + 4)])
def test_window_percentiles_merge_histograms(written: dict, start: int, end: int) -> None:
    reader = StoreReader(written["path"])
    got = reader.window_percentiles(written["run_id"], start, end, op="update")
    raw = written["raw"]
    values = [v for (ts, op), vs in raw.items() if op == "update" and start <= ts < end for v in vs]
    check(got, values)
    assert got["ops"] >= len(values)


def test_per_agent_rows_are_kept(written: dict) -> None:
    reader = StoreReader(written["path"])
    _, rows = reader.sql(
        f"SELECT count(*), count(DISTINCT agent) FROM op_intervals WHERE run_id = '{written['run_id']}'"
    )
    assert rows[0] == (len(written["lines"]) * 3, 4)


def test_node_seconds_view(written: dict) -> None:
    rows = StoreReader(written["path"]).node_seconds(written["run_id"])
    assert rows[0]["mem_pct"] == pytest.approx(37.5)
    assert set(rows[0]) >= {"ts", "host", "cpu_pct", "disk_read_bps", "net_tx_bps"}


def test_late_line_for_an_evicted_second_is_merged(tmp_path) -> None:  # noqa: ANN001
    lines, raw = make_lines(seconds=30, agents=2, ops=("read",))
    late = lines.pop(2)  # a line for T0 + 1, arriving long after its second was written
    path = tmp_path / "late.duckdb"
    with StoreWriter(path, flush_every_s=3600) as writer:
        run_id = writer.start_run("late", "scn", "", "", {}, {}, {})
        for line in lines:
            writer.add_interval(run_id, line)
        writer.flush()
        writer.add_interval(run_id, dict(late, ts=late["ts"] + 10))  # make it newer ...
        writer.flush()
        writer.add_interval(run_id, late)
        writer.end_run(run_id, "completed", None)
    row = [r for r in StoreReader(path).op_seconds(run_id) if r["ts"] == late["ts"]]
    assert len(row) == 1
    assert row[0]["ops"] == sum(ln["ops"]["read"]["ops"] for ln in lines + [late]
                                if ln["ts"] == late["ts"])  # fmt: skip
    check(row[0], raw[(late["ts"], "read")])
