"""A store holding the history of a scenario: steady runs, then slower ones (a change
point at run 6), one run with other settings, a failed run, another scenario's run."""

from __future__ import annotations

from pathlib import Path

from loadtower.store import StoreWriter
from tests.store.synth import T0, make_lines

SECONDS = 5
SLOW = 2.0  # runs 6 .. 8 have every latency twice as long
SETTINGS = {"name": "nightly", "phases": [{"type": "run", "rate": 500}]}


def _run(writer: StoreWriter, n: int, scale: float, settings: dict, status: str = "completed",
         scenario: str = "nightly") -> str:  # fmt: skip
    start = T0 + 100 * n
    lines, _raw = make_lines(seconds=SECONDS, agents=2, ops=("read", "update"), phase="main",
                             start=start, scale=scale, seed=n, per_second=200)  # fmt: skip
    run_id = writer.start_run(f"night {n}", scenario, "name = 'nightly'\n", "hosts = 1\n", {}, {},
                              {"settings": settings}, run_id=f"run-{n:02d}",
                              started=float(start))  # fmt: skip
    writer.phase_started(run_id, 0, "main", "run", float(start), {"rate": 500})
    for line in lines:
        writer.add_interval(run_id, line)
    writer.phase_ended(run_id, 0, float(start + SECONDS), {})
    writer.end_run(run_id, status, None)
    return run_id


def build_history_store(path: Path) -> Path:
    """Runs 1-5 of scenario 'nightly' steady, 6-9 twice as slow (9 with other settings),
    a failed one and one of another scenario between them."""
    with StoreWriter(path) as writer:
        for n in range(1, 6):
            _run(writer, n, 1.0, SETTINGS)
        _run(writer, 50, 1.0, SETTINGS, status="failed")  # partial: not in the history
        _run(writer, 51, 1.0, SETTINGS, scenario="other")
        for n in range(6, 9):
            _run(writer, n, SLOW, SETTINGS)
        _run(writer, 9, SLOW, {**SETTINGS, "phases": [{"type": "run", "rate": 900}]})
    return path
