"""One rate per phase (store/phase_rate.py): ops over the measured span of the phase's
lines, the same figure in phase_summary (SQL), StoreReader.phase_totals, compare and the
engine table; per-op rows over the phase's duration; clock and seconds fallbacks; old
stores without span columns still read."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from loadtower.store import StoreReader, StoreWriter
from loadtower.store.compare import compare_runs
from loadtower.store.engine_compare import engine_table, run_sides
from loadtower.store.phase_rate import measured_duration, ops_per_s, round_rate
from loadtower.store.report_html import render
from loadtower.store.schema import migrate
from tests.store.synth import T0, make_lines


def _with_span(lines: list[dict], first_start: float, last_done: float) -> list[dict]:
    """Spans that cover [first_start, last_done] across the lines, one second each."""
    out = []
    for line in lines:
        ts = int(line["ts"])
        out.append({**line, "span": [max(ts - 1.0, first_start), min(ts + 0.0, last_done)]})
    return out


def _write(writer: StoreWriter, phases: dict[str, list[dict]], clocks: dict) -> str:
    run_id = writer.start_run("t", "scn", "a = 1\n", "", {}, {}, {})
    for index, (name, lines) in enumerate(phases.items()):
        started, ended = clocks.get(name, (None, None))
        if started is not None:
            writer.phase_started(run_id, index, name, "run", started, {})
        for line in lines:
            writer.add_interval(run_id, line)
        if ended is not None:
            writer.phase_ended(run_id, index, ended, {})
    writer.end_run(run_id, "completed", None)
    return run_id


def test_the_duration_is_the_span_else_the_clock_else_the_seconds() -> None:
    assert measured_duration(10.0, 12.5, (0.0, 100.0), (0, 99)) == 2.5
    assert measured_duration(None, None, (10.0, 14.0), (0, 99)) == 4.0
    assert measured_duration(None, None, None, (10, 14)) == 5.0
    assert measured_duration(None, None, (None, None), (None, None)) is None
    assert measured_duration(12.0, 10.0, None, (10, 11)) == 2.0  # a reversed span is no span
    assert ops_per_s(5000, 1.9) == 2631.6 and ops_per_s(7, None) == 0.0
    assert [round_rate(x) for x in (0.25, 0.35, 2.25, -0.25)] == [0.3, 0.4, 2.3, -0.2]


def test_phase_summary_divides_by_the_measured_span_and_ops_add_up(tmp_path: Path) -> None:
    """4 s of completion seconds but ops that ran for 2.5 s: 2.5 s is the duration (the
    old view divided by the distinct seconds); each op over the phase's 2.5 s."""
    lines, _ = make_lines(seconds=4, agents=2, ops=("read", "update"), phase="load", seed=3)
    lines = _with_span(lines, T0 - 0.5, T0 + 2.0)
    with StoreWriter(tmp_path / "s.duckdb") as writer:
        run_id = _write(writer, {"load": lines}, {"load": (T0 - 3.0, T0 + 9.0)})
    reader = StoreReader(tmp_path / "s.duckdb")
    rows = reader.phase_summary(run_id)
    ops = {r["op"]: r["ops"] for r in rows}
    assert {r["duration_s"] for r in rows} == {2.5}
    for r in rows:
        assert r["ops_per_s"] == round_rate(r["ops"] / 2.5)
    total = reader.phase_totals(run_id)["load"]
    assert total["ops"] == sum(ops.values()) and total["duration_s"] == 2.5
    assert total["ops_per_s"] == round_rate(total["ops"] / 2.5)
    assert abs(sum(r["ops_per_s"] for r in rows) - total["ops_per_s"]) <= 0.1
    engines = {r["op"]: r for r in engine_table(tmp_path / "s.duckdb", [run_id])}
    assert engines["total"]["ops_per_s"] == total["ops_per_s"]
    assert {op: engines[op]["ops_per_s"] for op in ops} == {r["op"]: r["ops_per_s"] for r in rows}


def test_lines_without_span_fall_back_to_the_phase_clock_then_the_seconds(
    tmp_path: Path,
) -> None:
    a, _ = make_lines(seconds=3, agents=1, ops=("read",), phase="a", start=T0)
    b, _ = make_lines(seconds=3, agents=1, ops=("read",), phase="b", start=T0 + 10)
    with StoreWriter(tmp_path / "s.duckdb") as writer:
        run_id = _write(writer, {"a": a, "b": b}, {"a": (T0 - 1.0, T0 + 3.0)})
    reader = StoreReader(tmp_path / "s.duckdb")
    rows = {r["phase"]: r for r in reader.phase_summary(run_id)}
    assert rows["a"]["duration_s"] == 4.0  # its phases row's clock
    assert rows["b"]["duration_s"] == 3.0  # no phases row: its 3 completion seconds
    assert rows["b"]["ops_per_s"] == round_rate(rows["b"]["ops"] / 3.0)


def test_identical_runs_compare_with_no_change(tmp_path: Path) -> None:
    lines, _ = make_lines(seconds=5, agents=2, ops=("read",), phase="load", seed=5)
    with StoreWriter(tmp_path / "s.duckdb") as writer:
        first = _write(writer, {"load": _with_span(lines, T0 - 1, T0 + 3.8)}, {})
        shifted = [{**line, "ts": line["ts"] + 100} for line in lines]
        second = _write(writer, {"load": _with_span(shifted, T0 + 99, T0 + 103.8)}, {})
    [row] = compare_runs(tmp_path / "s.duckdb", first, second)
    assert row["ops_per_s_a"] == row["ops_per_s_b"] == round_rate(row["ops_a"] / 4.8)
    assert row["ops_change_pct"] == 0.0 and not row["significant_ops"]
    assert row["duration_s_a"] == row["duration_s_b"] == 4.8


def test_spans_are_kept_min_and_max_across_flushes(tmp_path: Path) -> None:
    lines, _ = make_lines(seconds=6, agents=2, ops=("read",), phase="run")
    lines = _with_span(lines, T0 - 0.25, T0 + 5.75)
    path = tmp_path / "s.duckdb"
    writer = StoreWriter(path)
    run_id = writer.start_run("t", "scn", "", "", {}, {}, {})
    for line in lines[len(lines) // 2 :]:  # the later half first, flushed
        writer.add_interval(run_id, line)
    writer.flush()
    for line in lines[: len(lines) // 2]:
        writer.add_interval(run_id, line)
    writer.end_run(run_id, "completed", None)
    writer.close()
    con = duckdb.connect(str(path), read_only=True)
    found = con.execute("SELECT first_start, last_done FROM op_phase").fetchall()
    con.close()
    assert found == [(T0 - 0.25, T0 + 5.0)]


def test_a_store_without_span_columns_still_reads(tmp_path: Path) -> None:
    """Schema 3 (before the span): rows and the view it was given then; the readers and
    compare read it, rates from the phase clock or the seconds."""
    path = tmp_path / "old.duckdb"
    con = duckdb.connect(str(path))
    migrate(con, target=3)
    con.execute(
        "INSERT INTO runs (id, name, status, scenario_text) "
        "VALUES ('r1', 'old', 'completed', 'engine = \"cassandra\"')"
    )
    con.execute("INSERT INTO phases VALUES ('r1', 0, 'run', 'run', 100.0, 104.0, '{}', '{}')")
    # phases that do not name their engine, of a scenario that names none: the default's
    con.execute("INSERT INTO runs (id, name, status, scenario_text) "
                "VALUES ('r2', 'older', 'completed', 'name = \"x\"')")
    con.execute("INSERT INTO phases VALUES ('r2', 0, 'run', 'run', 100.0, 104.0, '{}', '{}')")
    con.execute(
        "INSERT INTO op_phase (run_id, phase, op, first_ts, last_ts, ops, errors, late) "
        "VALUES ('r1', 'run', 'read', 100, 103, 400, 0, 0)"
    )
    con.execute(
        "CREATE VIEW phase_summary AS SELECT run_id, phase, op, ops, "
        "ops / greatest(last_ts - first_ts + 1, 1) AS ops_per_s, p50_ms, p90_ms, p99_ms, "
        "p999_ms, max_ms, errors, first_ts FROM op_phase"
    )
    con.close()
    reader = StoreReader(path)
    assert reader.phase_summary("r1")[0]["ops"] == 400
    assert reader.phase_totals("r1")["run"]["ops_per_s"] == 100.0  # 400 ops over 4.0 s
    [total] = [r for r in engine_table(path, ["r1"]) if r["op"] == "total"]
    assert total["ops_per_s"] == 100.0
    assert reader.ramp_steps("r1") == []
    assert run_sides(path, "r1") == run_sides(path, "r2") == [("cassandra", "cassandra")]


@pytest.mark.parametrize("bad", [None, "x", [1], [2.0, 1.0], ["a", 2], [float("nan"), 1.0]])
def test_a_line_with_a_bad_span_is_kept_without_one(tmp_path: Path, bad: object) -> None:
    lines, _ = make_lines(seconds=2, agents=1, ops=("read",), phase="run")
    with StoreWriter(tmp_path / "s.duckdb") as writer:
        run_id = _write(writer, {"run": [{**line, "span": bad} for line in lines]}, {})
    [row] = StoreReader(tmp_path / "s.duckdb").phase_summary(run_id)
    assert row["ops"] == sum(line["ops"]["read"]["ops"] for line in lines)
    assert row["duration_s"] == 2.0


def test_ramp_steps_are_rows_of_their_ramps_side_in_the_engine_table(tmp_path: Path) -> None:
    path = tmp_path / "s.duckdb"
    with StoreWriter(path) as writer:
        run_id = writer.start_run("t", "scn", "", "", {}, {}, {})
        for index, target in enumerate(("cassandra", "clickhouse")):
            name = f"{target}:saturation"
            params = {"target": target, "engine": target}
            start = T0 + 100 * index
            writer.phase_started(run_id, index, name, "ramp", float(start), params)
            for step, level in enumerate((40, 50)):
                lines, _ = make_lines(seconds=3, agents=1, ops=("read",),
                                      phase=f"{name}@{level}", start=start + 10 * step)
                for line in _with_span(lines, start + 10 * step - 1.0, start + 10 * step + 2.0):
                    writer.add_interval(run_id, line)
            writer.phase_ended(run_id, index, float(start + 30), {})
        writer.end_run(run_id, "completed", None)
    steps = StoreReader(path).ramp_steps(run_id)  # a ramp that has not said its verdict
    assert [(r["ramp"], r["label"], r["asked"], r["passed"]) for r in steps] == [
        (f"{t}:saturation", f"{t}:saturation@{level}", float(level), None)
        for t in ("cassandra", "clickhouse") for level in (40, 50)
    ]
    html = render(StoreReader(path), run_id)
    assert "<h2>Ramp steps</h2>" in html and html.count("saturation@") >= 8
    assert f"<td>{steps[0]['achieved_ops_per_s']:,.1f}</td>" in html
    rows = engine_table(path, [run_id], phase="saturation")
    found = {(r["phase"], r["op"], r["target"]) for r in rows}
    assert found == {
        (f"saturation@{level}", op, target)
        for level in (40, 50) for op in ("read", "total") for target in ("cassandra", "clickhouse")
    }
    totals = StoreReader(path).phase_totals(run_id)
    for r in rows:
        assert r["ops_per_s"] == totals[f"{r['target']}:{r['phase']}"]["ops_per_s"]
        assert r["duration_s"] == 3.0
