"""The expected total duration of a plan, and the headless live line that shows it."""

from __future__ import annotations

from pathlib import Path

from loadtower.orchestrator.plan_duration import clock, expected_total, planned_seconds
from loadtower.scenarios.loader import load_scenario_text
from loadtower.scenarios.plan import load_plan
from tests.orchestrator.phase_fixtures import INVENTORY

PHASES = """
[[phases]]
type = "load"
[[phases]]
type = "run"
rate = 10
duration = "30s"
[[phases]]
type = "ramp"
rates = [10, 20, 30]
step_duration = "10s"
target_p99_ms = 5
[[phases]]
type = "pause"
duration = "1m"
"""


def test_phases_count_with_their_planned_length_and_work_bound_ones_as_floors() -> None:
    sc = load_scenario_text('name = "d"' + PHASES, "d.toml")
    assert [planned_seconds(p) for p in sc.phases] == [
        (0.0, False), (30.0, True), (30.0, True), (60.0, True)
    ]
    # before the first phase: what passed (set-up) plus every phase; the load makes it a floor
    assert expected_total(sc, started=1000, now=1004) == (4 + 120, True)
    # in the run phase (index 1), 10 s in, the load took 25 s after 5 s of set-up
    assert expected_total(sc, 1000, 1040, step=1, phase_started=1030) == (30 + 30 + 30 + 60, False)
    # a phase that overruns its plan (a pause does not, a run whose stop is slow can)
    assert expected_total(sc, 1000, 1075, step=1, phase_started=1030) == (30 + 45 + 90, False)


def test_a_scale_out_keeps_the_total_open_until_it_is_done() -> None:
    sc = load_scenario_text(
        'name = "g"\n[[phases]]\ntype = "scale_out"\nhost = "db2"\nrate = 5\n'
        '[[phases]]\ntype = "run"\nrate = 5\nduration = "20s"\n',
        "g.toml",
    )
    assert expected_total(sc, 0, 3, step=0, phase_started=1) == (1 + 10 + 20, True)
    assert expected_total(sc, 0, 80, step=0, phase_started=1) == (80 + 20, True)
    assert expected_total(sc, 0, 90, step=1, phase_started=85) == (85 + 20, False)


def test_targets_run_the_phases_once_each() -> None:
    sc = load_scenario_text(
        'name = "t"\n[targets.a]\nengine = "cassandra"\n[targets.b]\nengine = "cassandra"\n'
        '[[phases]]\ntype = "run"\nrate = 5\nduration = "20s"\n',
        "t.toml",
    )
    assert expected_total(sc, 0, 0) == (40, False)
    assert expected_total(sc, 0, 30, step=1, phase_started=25) == (45, False)


def test_clock_format() -> None:
    assert [clock(s) for s in (0, 9.9, 75, 3600 + 62)] == ["0:00", "0:09", "1:15", "1:01:02"]


def test_the_headless_line_shows_elapsed_over_the_expected_total(tmp_path: Path) -> None:
    from loadtower.orchestrator.benchmark import Orchestrator, RunOptions
    from loadtower.orchestrator.headless_display import _status

    (tmp_path / "s.toml").write_text('name = "d"' + PHASES)
    (tmp_path / "i.toml").write_text(INVENTORY)
    orch = Orchestrator(load_plan(tmp_path / "s.toml", tmp_path / "i.toml"),
                        RunOptions(store=tmp_path / "x.duckdb"))
    import time

    now = time.time()
    orch.state.run_id = "r1"
    orch.state.started = now - 40
    text = _status(orch).renderables[0].plain
    assert "elapsed 0:40/2:40+" in text  # 40 s of set-up so far + 120 s planned
    orch.state.phase, orch.state.phase_index, orch.state.step = "2-run", 1, 1
    orch.state.phase_started = now - 10  # the load and set-up took 30 s
    text = _status(orch).renderables[0].plain
    assert "phase 2/4 2-run" in text and "elapsed 0:40/2:30 " in text
