"""`loadtower agent run`'s summary line: what it counts, and the CPU it reports."""

from __future__ import annotations

from loadtower.agents.measure import IntervalRecorder
from loadtower.orchestrator.standalone_load import Summary


def test_summary_sums_cpu_seconds_of_the_phase_lines_only() -> None:
    rec = IntervalRecorder("a1/0", "a1")
    rec.offset, rec.phase = 100.0, "run"
    for ms in (1.0, 2.0, 40.0):
        rec.ok("run", "read", 0.0, 0.0, ms / 1000.0, False)
    [run_line] = rec.finished(101)
    run_line["cpu_s"] = 0.25  # a short first interval: 0.25 s of CPU, not cpu_pct / 100
    run_line["cpu_pct"] = 100.0
    summary = Summary(json_out=False)
    summary.phase = "run"
    summary.line(run_line)
    summary.line({**run_line, "phase": "load", "cpu_s": 5.0})  # a late line of the load
    summary.line({"type": "event", "cpu_s": 9.0})
    result = summary.result()["summary"]
    assert result["cpu_s"] == 0.25
    assert result["ops"] == 3
    assert 39.9 <= result["max_ms"] <= 40.1


def test_interval_cpu_seconds_match_the_process_clock() -> None:
    rec = IntervalRecorder("a1/0", "a1")
    rec.phase = "run"
    before = rec._cpu_s()
    sum(i * i for i in range(200_000))  # some CPU
    [line] = rec.finished(1, keep_alive=True)  # lanes running: a line without ops
    after = rec._cpu_s()
    assert 0 < line["cpu_s"] <= after - before + 1e-3
