"""The store's read API for the TUI (live_feed, runs_list, compare_view, read_errors) on
the TUI's fixture store: figures checked against the StoreReader's own rows."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import pytest

from loadtower.errors import LoadtowerError
from loadtower.store import StoreReader
from loadtower.store.compare_view import CompareView, compare_view
from loadtower.store.live_feed import WINDOWS, Snapshot, run_bounds, snapshot, store_version
from loadtower.store.read_errors import StoreReadError
from loadtower.store.runs_list import RunListing, list_runs
from tests.tui.fixture_store import PHASES, RUN_A, RUN_B, RUN_FAILED, T0, build_fixture_store


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_fixture_store(tmp_path_factory.mktemp("read-api") / "store.duckdb")


def test_runs_list_is_typed_newest_first_with_peak_and_worst_p99(store: Path) -> None:
    runs = list_runs(store)
    assert [r.id for r in runs] == [RUN_FAILED, RUN_B, RUN_A]
    assert all(isinstance(r, RunListing) for r in runs)
    reader = StoreReader(store)
    for run in runs:
        per_second: dict[int, int] = defaultdict(int)
        for row in reader.op_seconds(run.id):
            per_second[int(row["ts"])] += int(row["ops"])
        assert run.peak_ops == max(per_second.values())
        worst = max(float(r["p99_ms"]) for r in reader.phase_summary(run.id))
        assert run.p99_ms == pytest.approx(worst)
        assert run.name == "fixture" and run.scenario == "fixture"
    failed = runs[0]
    assert failed.status == "failed" and failed.reason == "host db1: SSH connection lost"
    assert runs[2].started == T0 and runs[2].ended == T0 + PHASES[-1][3]


def test_runs_list_of_a_missing_store_is_empty(tmp_path: Path) -> None:
    assert list_runs(tmp_path / "none.duckdb") == []


def test_snapshot_of_the_whole_run_and_of_a_window(store: Path) -> None:
    whole = snapshot(store, RUN_A, None, 0)
    assert isinstance(whole, Snapshot)
    assert whole.first_ts == T0 and whole.last_ts == T0 + PHASES[-1][3]
    assert whole.cursor == whole.last_ts
    assert set(whole.ops) == {"insert", "read", "update"}
    rows = StoreReader(store).op_seconds(RUN_A)
    assert sum(p.ops for points in whole.ops.values() for p in points) == sum(
        int(r["ops"]) for r in rows)
    assert [p.name for p in whole.phases] == [p[0] for p in PHASES]
    assert whole.errors_by_class == {"WriteTimeout": 2}
    assert any(e["kind"] == "warning" for e in whole.events)
    assert {s.label for s in whole.stretches} == {p[0] for p in PHASES}
    assert set(whole.nodes) == {"db1", "db2"}
    summary = StoreReader(store).phase_summary(RUN_A)
    assert whole.summary == summary  # an ended run: the store's phase_summary, as reports

    window = WINDOWS[0]
    at = T0 + 20.0
    part = snapshot(store, RUN_A, at, window)
    assert part.cursor == at
    assert all(T0 <= p.ts < at for points in part.ops.values() for p in points)
    assert all(e["ts"] <= at for e in part.events)


def test_snapshot_cursor_is_kept_inside_the_run(store: Path) -> None:
    early = snapshot(store, RUN_A, T0 - 1000, 60)
    late = snapshot(store, RUN_A, T0 + 10_000, 60)
    assert early.cursor == early.first_ts and late.cursor == late.last_ts


def test_unknown_run_is_a_key_error(store: Path) -> None:
    with pytest.raises(KeyError):
        snapshot(store, "no-such-run", None, 0)
    with pytest.raises(KeyError):
        run_bounds(store, "no-such-run")


def test_run_bounds(store: Path) -> None:
    run, first, last = run_bounds(store, RUN_FAILED)
    assert run["status"] == "failed"
    assert (first, last) == (T0 + 7200, T0 + 7200 + 15)


def test_a_file_that_is_no_store_is_a_loadtower_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.duckdb"
    bad.write_bytes(b"this is not a database" * 500)
    for read in (lambda: snapshot(bad, RUN_A, None, 0), lambda: list_runs(bad)):
        with pytest.raises(LoadtowerError, match="bad.duckdb"):
            read()


def test_a_database_without_the_store_tables_is_a_store_read_error(tmp_path: Path) -> None:
    import duckdb

    other = tmp_path / "other.duckdb"
    with duckdb.connect(str(other)) as con:
        con.execute("CREATE TABLE unrelated (x INTEGER)")
    with pytest.raises(StoreReadError, match="other.duckdb"):
        snapshot(other, RUN_A, None, 0)
    with pytest.raises(LoadtowerError, match="other.duckdb"):
        list_runs(other)


def test_store_version_changes_when_a_writer_commits(tmp_path: Path) -> None:
    from loadtower.store import StoreWriter

    path = tmp_path / "store.duckdb"
    assert store_version(path) == (0, 0, 0, 0)
    writer = StoreWriter(path)
    try:
        before = store_version(path)
        writer.start_run("s", "s", "", "", {}, {}, {}, run_id="r1", started=T0)
        writer.flush()
        assert store_version(path) != before
    finally:
        writer.close()


def test_compare_view_has_both_runs(store: Path) -> None:
    view = compare_view(store, RUN_A, RUN_B)
    assert isinstance(view, CompareView)
    assert [s.run["id"] for s in view.snapshots] == [RUN_A, RUN_B]
    assert {(r["phase"], r["op"]) for r in view.rows} == {
        (label, op) for label, _kind, _t0, _t1, rates in PHASES for op in rates}
    by_op = {(r["phase"], r["op"]): r for r in view.rows}
    assert by_op[("ycsb-a", "read")]["p99_ms_b"] > by_op[("ycsb-a", "read")]["p99_ms_a"]  # B is slower
    assert view.steps == ([], [])  # no ramp in either run


def test_compare_view_of_a_missing_run_fails_clearly(store: Path) -> None:
    with pytest.raises((KeyError, LoadtowerError)):
        compare_view(store, RUN_A, "no-such-run")
