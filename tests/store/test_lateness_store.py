"""The open model's lateness in the store (schema 6): the interval lines'
``lateness_hist`` merged per second, minute and phase across agents, its p50/p99 in
``phase_summary``; lines without it (closed model, older agents) leave it NULL; a
lateness histogram that is not HDR V2 is left out and said, the rest of its line kept."""

from __future__ import annotations

from pathlib import Path

import duckdb

from loadtower.protocol.hdr_encoding import encode, new_hist
from loadtower.store import StoreReader, StoreWriter
from loadtower.store.rollups import stored_lateness


def _line(agent: str, ts: int, op: str, response_us: list[int],
          lateness_us: list[int] | None) -> dict:
    resp, late = new_hist(), new_hist()
    for v in response_us:
        resp.record_value(v)
    sample = {"ops": len(response_us), "errors": {}, "late": 0,
              "service_hist": encode(resp), "response_hist": encode(resp)}
    if lateness_us is not None:
        for v in lateness_us:
            late.record_value(v)
        sample["lateness_hist"] = encode(late)
    return {"type": "interval", "agent": agent, "host": "h", "ts": ts, "phase": "run",
            "cpu_pct": 1.0, "ops": {op: sample}}


def test_lateness_is_merged_across_agents_and_seconds(tmp_path: Path) -> None:
    path = tmp_path / "store.duckdb"
    a = [10] * 90 + [5000] * 10  # agent 1: p50 10 us, a tail of 5 ms
    b = [30] * 100
    with StoreWriter(path) as writer:
        run_id = writer.start_run("late", "scn", "", "", {}, {}, {})
        writer.add_interval(run_id, _line("a1/0", 100, "read", [900] * 100, a))
        writer.add_interval(run_id, _line("a2/0", 101, "read", [900] * 100, b))
        writer.add_interval(run_id, _line("a1/0", 101, "write", [900] * 5, None))  # closed
        writer.end_run(run_id, "completed", None)
    want = new_hist()
    for v in a + b:
        want.record_value(v)
    rows = {r["op"]: r for r in StoreReader(path).phase_summary(run_id)}
    assert rows["read"]["lateness_p50_ms"] == want.get_value_at_percentile(50) / 1000.0
    assert rows["read"]["lateness_p99_ms"] == want.get_value_at_percentile(99) / 1000.0
    assert rows["read"]["lateness_p99_ms"] > rows["read"]["lateness_p50_ms"]
    assert rows["write"]["lateness_p50_ms"] is None and rows["write"]["lateness_p99_ms"] is None
    con = duckdb.connect(str(path), read_only=True)
    try:
        blobs = con.execute("SELECT ts, lateness_hist FROM op_second WHERE op = 'read' "
                            "ORDER BY ts").fetchall()
        [(phase_blob,)] = con.execute(
            "SELECT lateness_hist FROM op_phase WHERE op = 'read'").fetchall()
    finally:
        con.close()
    assert [(ts, stored_lateness(b).get_total_count()) for ts, b in blobs] == [(100, 100),
                                                                              (101, 100)]
    assert stored_lateness(phase_blob).get_total_count() == 200


def test_a_bad_lateness_histogram_is_left_out_and_said(tmp_path: Path) -> None:
    path = tmp_path / "store.duckdb"
    line = _line("a1/0", 100, "read", [900] * 10, [20] * 10)
    line["ops"]["read"]["lateness_hist"] = "bm90IGEgaGlzdG9ncmFt"  # base64, not HDR
    with StoreWriter(path) as writer:
        run_id = writer.start_run("late", "scn", "", "", {}, {}, {})
        writer.add_interval(run_id, line)
        writer.end_run(run_id, "completed", None)
    reader = StoreReader(path)
    [row] = reader.phase_summary(run_id)
    assert row["ops"] == 10 and row["lateness_p50_ms"] is None
    said = [e["message"] for e in reader.events(run_id) if e["kind"] == "bad_sample"]
    assert any("lateness histogram was left out" in m for m in said), said


def test_lateness_histograms_export_as_hdrh_text_in_csv_and_parquet(tmp_path: Path) -> None:
    """A CSV cannot hold raw BLOB bytes: every histogram column of op_second_hists, the
    lateness one too, is written as hdrh's base64 text that decodes to what was stored."""
    import csv

    import pyarrow.parquet as pq
    from hdrh.histogram import HdrHistogram

    from loadtower.store.export import export_run

    path = tmp_path / "store.duckdb"
    with StoreWriter(path) as writer:
        run_id = writer.start_run("late", "scn", "", "", {}, {}, {})
        writer.add_interval(run_id, _line("a1/0", 100, "read", [900] * 100, [10] * 50 + [7000] * 50))
        writer.add_interval(run_id, _line("a1/0", 101, "read", [900] * 10, None))
        writer.end_run(run_id, "completed", None)
    csv_counts = export_run(path, run_id, "csv", tmp_path / "csv")
    pq_counts = export_run(path, run_id, "parquet", tmp_path / "pq")
    assert csv_counts["op_second_hists"] == pq_counts["op_second_hists"] == 2
    with open(tmp_path / "csv" / "op_second_hists.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    texts = pq.read_table(tmp_path / "pq" / "op_second_hists.parquet").column(
        "lateness_hist").to_pylist()
    assert [r["lateness_hist"] for r in rows][0] == texts[0]
    assert texts[1] is None and rows[1]["lateness_hist"] == ""
    late = HdrHistogram.decode(texts[0])
    assert late.get_total_count() == 100 and late.get_max_value() >= 7000
