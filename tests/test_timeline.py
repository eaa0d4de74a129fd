"""The parallel run's timeline (tests/timeline.py): lines written as the workers write
them, read back, and the summary's figures from them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests import timeline


def _line(worker: str, test: str, alone: bool, asked: float, got: float, ended: float) -> dict:
    return {"test": test, "group": test.split("::")[0], "alone": alone, "asked": asked,
            "got": got, "ended": ended, "worker": worker}


def test_the_summary_adds_turns_waits_and_idle_time(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    for worker, entries in {
        "gw0": [_line("gw0", "a.py::t1", True, 0, 0, 100),  # alone: gw1 waits for it
                _line("gw0", "b.py::t2", False, 100, 100, 130)],
        "gw1": [_line("gw1", "c.py::t3", False, 0, 100, 160)],
    }.items():
        monkeypatch.setenv("PYTEST_XDIST_WORKER", worker)
        for entry in entries:
            timeline.record(tmp_path, entry)
    with (tmp_path / "timeline-gw1.jsonl").open("a") as cut:
        cut.write('{"cut short')  # a killed worker's last line
    rows = timeline.read(tmp_path)
    assert sorted(r["test"] for r in rows) == ["a.py::t1", "b.py::t2", "c.py::t3"]
    copy = tmp_path / "all.jsonl"
    monkeypatch.setenv("LOADTOWER_TIMELINE", str(copy))
    lines = timeline.finish(tmp_path)
    assert lines[0] == ("timeline: 3 tests over 160 s; alone turns 100 s "
                        "(1 tests: nothing else ran meanwhile)")
    assert lines[1] == "  gw0: in tests 130 s, waiting for a turn 0 s, idle 30 s"
    assert lines[2] == "  gw1: in tests 60 s, waiting for a turn 100 s, idle 0 s"
    assert lines[4].split() == ["100", "alone", "a.py"]
    kept = copy.read_text().splitlines()  # every line as written, the cut one too
    assert [json.loads(x)["test"] for x in kept[:3]] == ["a.py::t1", "b.py::t2", "c.py::t3"]
    assert kept[3] == '{"cut short'


def test_nothing_recorded_prints_nothing_and_a_line_not_written_fails_no_test(
        tmp_path: Path) -> None:
    assert timeline.finish(tmp_path) == []
    timeline.record(tmp_path / "gone", _line("gw0", "a.py::t", False, 0, 0, 1))  # no folder
    assert timeline.read(tmp_path) == []
