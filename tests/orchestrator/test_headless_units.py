"""The headless output in a log file (stdout not a terminal): run id, one line per phase
start and end (a ramp: one per step), progress lines with elapsed/total, ops/s, p99 and
errors; and a final table whose phase and op names are never cut."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

import pytest
from rich.console import Console

from loadtower.orchestrator import headless_display
from loadtower.orchestrator.benchmark import Orchestrator, RunOptions
from loadtower.orchestrator.sinks import Sinks
from loadtower.scenarios.plan import load_plan
from loadtower.store import StoreWriter
from loadtower.store.terminal_text import print_table, table_console
from tests.orchestrator.phase_fixtures import INVENTORY, interval_line

SCENARIO = """
name = "headless"
[[phases]]
name = "cassandra-warm-up-with-a-rather-long-name"
type = "run"
rate = 100
duration = "20s"
[[phases]]
name = "saturation"
type = "ramp"
rates = [40, 50]
step_duration = "10s"
target_p99_ms = 5
"""


def _orchestrator(tmp_path: Path) -> tuple[Orchestrator, StoreWriter]:
    (tmp_path / "sc.toml").write_text(SCENARIO)
    (tmp_path / "inv.toml").write_text(INVENTORY)
    plan = load_plan(tmp_path / "sc.toml", tmp_path / "inv.toml")
    orch = Orchestrator(plan, RunOptions(store=tmp_path / "store.duckdb"))
    writer = StoreWriter(tmp_path / "store.duckdb")
    run_id = writer.start_run("t", plan.scenario.name, SCENARIO, INVENTORY, {}, {}, {})
    orch.sinks = Sinks(writer, run_id, plan)
    return orch, writer


def test_piped_output_has_phase_lines_and_progress_lines(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(headless_display, "PROGRESS_EVERY_S", 0.0)  # a progress line every poll
    monkeypatch.setattr(headless_display, "POLL_S", 0.01)
    orch, writer = _orchestrator(tmp_path)
    out = io.StringIO()
    console = Console(file=out, width=80)  # a file: not a terminal
    done = asyncio.Event()
    step = {
        "label": "saturation@40", "step": 1, "asked": 40.0, "unit": "ops/s",
        "achieved_ops_per_s": 39.9, "p50_ms": 1.0, "p90_ms": 2.0, "p99_ms": 3.0,
        "errors": 0, "passed": True, "why": None,
    }

    async def until(text: str) -> None:
        """Until the display printed `text` (bounded: 30 s)."""
        for _ in range(3000):
            if text in out.getvalue():
                return
            await asyncio.sleep(0.01)
        raise AssertionError(f"never printed {text!r}: {out.getvalue()}")

    async def drive() -> None:
        state = orch.state
        state.run_id = orch.sinks.run_id  # type: ignore[union-attr]
        await until("run_id:")
        warm = "cassandra-warm-up-with-a-rather-long-name"
        for ts in range(int(state.started) - 12, int(state.started) + 30):
            orch.sinks.stats.add(interval_line(ts, "read", 100, 2000, 1, warm))  # type: ignore[union-attr]
        state.phase, state.phase_index, state.step = warm, 0, 0
        state.phase_started = state.started
        await until("(last 10 s)")
        state.results[state.phase] = {"ops": 2000, "ops_per_s": 100.0, "errors": 0,
                                      "notes": ["no load ran before"]}
        state.phase, state.phase_index, state.step = "saturation", 1, 1
        await until("saturation (ramp) started")
        state.results["saturation"] = {"steps": [step]}
        await until("step saturation@40")
        done.set()

    async def both() -> None:
        await asyncio.gather(headless_display.show_progress(orch, console, done), drive())

    asyncio.run(both())
    writer.close()
    lines = out.getvalue().splitlines()
    assert lines[0] == f"run_id: {orch.state.run_id}"
    assert "\x1b" not in out.getvalue()  # no live status line, no colour codes
    starts = [line for line in lines if line.endswith("started")]
    assert [s.split("] ", 1)[1] for s in starts] == [
        "phase 1/2 cassandra-warm-up-with-a-rather-long-name (run) started",
        "phase 2/2 saturation (ramp) started",
    ]
    ends = [line for line in lines if " ended" in line]
    assert ends[0].startswith("phase cassandra-warm-up-with-a-rather-long-name ended after ")
    assert ends[0].endswith(" s: 2,000 ops, 100.0 ops/s, 0 errors (no load ran before)")
    assert ends[1].startswith("phase saturation ended after ")
    assert "  step saturation@40 asked 40 ops/s: 39.9 ops/s, p99 3.00 ms, 0 errors: passed" in lines
    progress = [line for line in lines if "(last 10 s)" in line]
    assert progress, lines
    assert all(line.startswith("[") and "/" in line.split("]")[0] for line in progress)
    assert any(
        "phase 1/2 cassandra-warm-up-with-a-rather-long-name: 101.0 ops/s, p99 2.00 ms, "
        "errors 10 (last 10 s)" in line
        for line in progress
    ), progress


def test_the_result_table_keeps_every_name_whole_when_piped() -> None:
    long_phase = "cassandra:warm-up-with-a-rather-long-name@400#3"
    rows = [
        {"phase": long_phase, "op": "insert_batch_with_long_name", "ops": 123_456,
         "ops_per_s": 2628.4, "p50_ms": 1.0, "p90_ms": 2.0, "p99_ms": 3.0, "max_ms": 4.0,
         "errors": 0},
        {"phase": "p\x1b]0;owned\x07", "op": "read", "ops": 1, "ops_per_s": 1.0,
         "p50_ms": None, "p90_ms": None, "p99_ms": None, "max_ms": None, "errors": 0},
    ]
    out = io.StringIO()
    print_table(headless_display.result_table(rows, "Run x: results per phase and op"),
                table_console(file=out))
    text = out.getvalue()
    assert long_phase in text and "insert_batch_with_long_name" in text and "2,628.4" in text
    assert "\x1b" not in text and "\\x1b]0;owned\\x07" in text
    assert "…" not in text


def test_a_ramp_gets_a_table_with_a_row_per_step() -> None:
    steps = [
        {"label": f"saturation@{level}", "asked": float(level), "unit": "ops/s",
         "achieved_ops_per_s": level - 0.5, "p50_ms": 1.0, "p90_ms": 2.0, "p99_ms": p99,
         "errors": 0, "passed": p99 < 5, "why": None if p99 < 5 else "p99 9.00 ms > 5 ms"}
        for level, p99 in ((40, 1.0), (50, 9.0))
    ]
    [table] = headless_display.ramp_tables({"saturation": {"steps": steps}, "load": {"ops": 3}})
    out = io.StringIO()
    print_table(table, table_console(file=out))
    text = out.getvalue()
    assert "saturation@40" in text and "saturation@50" in text
    assert "failed: p99 9.00 ms > 5 ms" in text and "49.5" in text


def test_notes_say_no_load_ran_instead_of_zero_latencies() -> None:
    result = {"hosts": {"db1": {"compaction_s": 2.7}}, "p99_ms_before": None,
              "p99_ms_during": 4.5, "load_ran": {"before": False, "during": True}}
    [note] = headless_display.phase_notes({"compact": result})
    assert note == "compact: compaction on db1 took 2.7 s; no load ran before, p99 4.50 ms during"
