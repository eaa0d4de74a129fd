"""Tombstones scanned per read beside each phase's p99 (study 3): Cassandra's
system_views.tombstones_per_read readings in node_stats become, per phase, the table it
read (its read count moved during the phase) with the highest reading node's p50/p99/max;
StoreReader.phase_summary carries them, so the run's result table, the HTML report and
`loadtower compare` show the same figures; a run without them shows no such columns."""

from __future__ import annotations

import io
import json
from pathlib import Path

from rich.console import Console

from loadtower.orchestrator.headless_display import result_table
from loadtower.store import StoreReader, StoreWriter, compare_runs
from loadtower.store.report_html import render
from loadtower.store.table_reads import phase_tables
from tests.store.synth import make_lines, write_run


def _readings(writer: StoreWriter, run_id: str, t0: float, t1: float) -> None:
    """db1 read lt.t 300 times in the phase (p99 3), db2 not at all (its p99 9 is old);
    lt.other was read 20 times on db1; lt.idle not at all."""
    def stats(ts: float, host: str, table: str, reads: int, p99: float) -> None:
        writer.node_stats(run_id, ts, host, "cassandra", {
            f"tombstones_per_read/{table}/reads": reads, f"tombstones_per_read/{table}/p50": 1.0,
            f"tombstones_per_read/{table}/p99": p99, f"tombstones_per_read/{table}/max": p99 + 1})

    stats(t0 - 0.5, "db1", "lt.t", 100, 0.0)
    stats(t0 - 0.5, "db2", "lt.t", 50, 9.0)
    stats(t0 - 0.5, "db1", "lt.other", 5, 0.0)
    stats(t0 - 0.5, "db1", "lt.idle", 7, 4.0)
    stats(t0 + 2.0, "db1", "lt.t", 250, 2.0)
    stats(t1 + 0.5, "db1", "lt.t", 400, 3.0)
    stats(t1 + 0.5, "db1", "lt.other", 25, 1.0)
    stats(t1 + 30, "db1", "lt.t", 999, 50.0)  # a later phase's reads: not this one's


def _run(writer: StoreWriter, tombstones: bool, seed: int) -> str:
    lines, _ = make_lines(seconds=4, agents=1, ops=("read",), seed=seed)
    run_id = write_run(writer, lines, 4)
    if tombstones:
        _readings(writer, run_id, float(lines[0]["ts"]), float(lines[-1]["ts"]) + 1)
    return run_id


def test_phase_tables_pick_the_tables_read_and_the_highest_reading_node() -> None:
    phases = [{"name": "p", "started": 100.0, "ended": 110.0}]
    stats = [
        {"ts": 99.0, "host": "db1", "name": "tombstones_per_read/ks.a/reads", "value": 10.0},
        {"ts": 111.0, "host": "db1", "name": "tombstones_per_read/ks.a/reads", "value": 30.0},
        {"ts": 111.0, "host": "db1", "name": "tombstones_per_read/ks.a/p99", "value": 2.0},
        {"ts": 95.0, "host": "db2", "name": "tombstones_per_read/ks.a/reads", "value": 0.0},
        {"ts": 105.0, "host": "db2", "name": "tombstones_per_read/ks.a/reads", "value": 5.0},
        # first seen during the phase: its count (reads since the node started) is no
        # read of this phase
        {"ts": 104.0, "host": "db3", "name": "tombstones_per_read/ks.a/reads", "value": 500.0},
        {"ts": 104.0, "host": "db3", "name": "tombstones_per_read/ks.a/p99", "value": 90.0},
        {"ts": 105.0, "host": "db2", "name": "tombstones_per_read/ks.a/p99", "value": 7.0},
        {"ts": 105.0, "host": "db2", "name": "ops_per_s", "value": 1.0},
    ]
    assert phase_tables(phases, stats) == {"p": [{
        "tombstones_table": "ks.a", "table_reads": 25, "tombstones_p50": None,
        "tombstones_p99": 7.0, "tombstones_max": None}]}
    assert phase_tables([{"name": "q", "started": 200.0, "ended": 210.0}], stats) == {}
    # the grace after a phase's end never reaches into the next phase: a load that ends
    # a moment before a read phase starts is not given that phase's reads
    stats.append({"ts": 101.0, "host": "db2", "name": "tombstones_per_read/ks.a/reads",
                  "value": 1.0})
    load_then_read = [{"name": "load", "started": 90.0, "ended": 99.9},
                      {"name": "read", "started": 100.0, "ended": 110.0}]
    assert list(phase_tables(load_then_read, stats)) == ["read"]


def test_every_report_shows_the_same_tombstones_beside_the_p99(tmp_path: Path) -> None:
    path = tmp_path / "s.duckdb"
    with StoreWriter(path) as writer:
        a, b, plain = _run(writer, True, 1), _run(writer, True, 2), _run(writer, False, 3)
    reader = StoreReader(path)
    (row,) = reader.phase_summary(a)
    assert (row["phase"], row["op"], row["p99_ms"] > 0) == ("run", "read", True)
    assert {k: row[k] for k in ("tombstones_table", "table_reads", "tombstones_p50",
                                "tombstones_p99", "tombstones_max")} == {
        "tombstones_table": "lt.t", "table_reads": 300, "tombstones_p50": 1.0,
        "tombstones_p99": 3.0, "tombstones_max": 4.0}
    assert [t["tombstones_table"] for t in reader.table_reads(a)["run"]] == ["lt.t", "lt.other"]
    # the run's result table
    out = io.StringIO()
    Console(file=out, width=250).print(result_table(reader.phase_summary(a), "t"))
    text = out.getvalue()
    assert "tombstones/read p50" in text
    (values,) = [line for line in text.splitlines() if "lt.t" in line]
    assert values.replace("│", " ").split()[-3:] == ["lt.t", "<=1", "3.0"]  # 0 and 1 alike
    # the HTML report
    html = render(reader, a)
    assert "<th>Tombstones/read p99</th>" in html and "<td class='text'>lt.t</td>" in html
    # whose figures: the title of the engine the stored node_stats rows name (its kind's)
    assert (reader.table_reads_engines(a), reader.table_reads_engines(plain)) == (["cassandra"], [])
    assert "<h3>Tombstones scanned per read (Cassandra's figures)</h3>" in html
    # compare: A's and B's figures side by side
    (cmp,) = compare_runs(path, a, b)
    assert (cmp["tombstones_p99_a"], cmp["tombstones_p99_b"]) == (3.0, 3.0)
    # a run without Cassandra's figures: no such columns
    (bare,) = reader.phase_summary(plain)
    assert bare["tombstones_p99"] is None
    assert "tombstones" not in render(reader, plain)
    out = io.StringIO()
    Console(file=out, width=250).print(result_table([bare], "t"))
    assert "tombstones" not in out.getvalue()
    assert json.dumps(reader.phase_summary(plain))  # still plain JSON for --json readers
