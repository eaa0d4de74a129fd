"""Run history on a real DuckDB store: figures, settings marks, change points, the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loadtower.cli import main
from loadtower.errors import LoadtowerError
from loadtower.store import StoreReader
from loadtower.store.history import change_point_sentence, run_history
from tests.store.history_store import build_history_store


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_history_store(Path(tmp_path_factory.mktemp("history")) / "s.duckdb")


def test_runs_in_time_order_with_phase_summary_figures(store: Path) -> None:
    history = run_history(store, "nightly")
    assert [r.id for r in history.runs] == [f"run-{n:02d}" for n in range(1, 10)]
    assert history.phase == "main" and history.op is None and history.metric == "p99"
    reader = StoreReader(store)
    for r in history.runs:  # every op merged: the phase's own figure
        assert r.value == reader.phase_totals(r.id)["main"]["p99_ms"]
    reads = run_history(store, "nightly", op="read", metric="ops_per_s")
    for r in reads.runs:
        row = next(s for s in reader.phase_summary(r.id) if s["op"] == "read")
        assert r.value == row["ops_per_s"]


def test_the_slow_runs_start_a_regression_at_run_6(store: Path) -> None:
    history = run_history(store, "nightly")
    assert [(c.run_id, c.index, c.direction) for c in history.change_points] == [
        ("run-06", 6, "regression")
    ]
    change = history.change_points[0]
    assert 60.0 < change.change_pct < 140.0  # latencies doubled
    assert change.after > change.before


def test_different_settings_are_marked_and_can_be_left_out(store: Path) -> None:
    history = run_history(store, "nightly")
    assert [r.id for r in history.runs if r.differs] == ["run-09"]
    assert len({r.settings for r in history.runs}) == 2
    same = run_history(store, "nightly", same_settings=True)
    assert [r.id for r in same.runs] == [f"run-{n:02d}" for n in range(1, 9)]
    assert [c.run_id for c in same.change_points] == ["run-06"]


def test_report_sentence(store: Path) -> None:
    assert change_point_sentence(store, "run-03") is None
    sentence = change_point_sentence(store, "run-07")
    assert sentence is not None
    assert sentence.startswith("this run sits after a change point at run run-06 (p99 +")


def test_the_report_says_it(store: Path, tmp_path: Path) -> None:
    from loadtower.store.report_html import write_report

    write_report(store, "run-07", tmp_path / "after.html")
    assert "this run sits after a change point at run run-06 (p99 +" in (
        tmp_path / "after.html").read_text()
    write_report(store, "run-03", tmp_path / "before.html")
    assert "change point" not in (tmp_path / "before.html").read_text()


def test_bad_names_are_one_line(store: Path) -> None:
    with pytest.raises(LoadtowerError, match="no runs of scenario 'nope'.*nightly, other"):
        run_history(store, "nope")
    with pytest.raises(LoadtowerError, match="phase 'ghost'.*phases: main"):
        run_history(store, "nightly", phase="ghost")


def test_cli_table_and_json(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["history", "nightly", "--store", str(store), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["change_points"][0]["run_id"] == "run-06"
    assert data["change_points"][0]["direction"] == "regression"
    assert main(["history", "nightly", "--store", str(store), "--metric", "ops_per_s"]) == 0
    out = capsys.readouterr().out
    assert "run-09" in out and "ops_per_s" in out
    assert main(["history", "nope", "--store", str(store)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no runs of scenario 'nope'" in err
