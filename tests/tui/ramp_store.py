"""Two runs of a ramp, stored as a ramp is: one phase label per step ("saturation@100"),
labels the phases table does not list (it has the ramp phase "saturation")."""

from __future__ import annotations

import random
from pathlib import Path

from tests.tui.live_writer import histogram

T0 = 1_790_200_000
RAMP_A, RAMP_B = "20260923-ramp-aaaa", "20260923-ramp-bbbb"
STEPS = (("saturation@100", 100), ("saturation@1000", 1000), ("saturation@10000", 10000))
STEP_S = 4


def write_ramp(writer: object, run_id: str, start: int, achieved: float) -> None:
    rng = random.Random(3)
    w = writer  # StoreWriter
    w.start_run("ramp", "ramp", None, None, {}, {}, {}, run_id=run_id, started=start)  # type: ignore[attr-defined]
    w.phase_started(run_id, 0, "saturation", "ramp", start, {"type": "ramp"})  # type: ignore[attr-defined]
    ts = start
    for label, rate in STEPS:
        for _ in range(STEP_S):
            n = int(rate * achieved)
            w.add_interval(run_id, {  # type: ignore[attr-defined]
                "type": "interval", "agent": "a1/0", "host": "a1", "ts": ts, "phase": label,
                "cpu_pct": 30.0, "ops": {"read": {
                    "ops": n, "errors": {}, "late": 0,
                    "service_hist": histogram(rng, min(n, 500), 800),
                    "response_hist": histogram(rng, min(n, 500), 900)}}})
            ts += 1
    w.phase_ended(run_id, 0, ts, {})  # type: ignore[attr-defined]
    w.end_run(run_id, "completed", None, ended=ts)  # type: ignore[attr-defined]


def build_ramp_store(path: Path) -> Path:
    from loadtower.store import StoreWriter

    writer = StoreWriter(path)
    try:
        write_ramp(writer, RAMP_A, T0, 1.0)
        write_ramp(writer, RAMP_B, T0 + 3600, 0.9)
    finally:
        writer.close()
    return path
