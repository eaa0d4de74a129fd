"""Latency against throughput: one point per ramp step and target, read from the store.

Each ramp step (``saturation@40``) is a point: the throughput it achieved (phase_rate.py's
figure, as phase_summary and ``compare`` print it) and its p50/p90/p99 from the merged
histograms, with the ramp's verdict. Study 2's figure draws these points, p90/p99
against achieved ops/s, one curve per system.

This reads ramp steps only (StoreReader.ramp_steps); a search phase's steps are points
the same way once the store has them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from loadtower.store.engine_compare import run_sides
from loadtower.store.reader import StoreReader


def _target(phase: dict[str, Any] | None, default: str) -> str:
    params = phase["params"] if phase and isinstance(phase["params"], dict) else {}
    return str(params.get("target") or default)


def latency_curve(store: Path | str, run: str) -> list[dict[str, Any]]:
    """One dict per ramp step and target, in the ramps' order: run_id, target, phase (the
    ramp's phase label), label (the step's), level (asked), ops_per_s (achieved), p50_ms,
    p90_ms, p99_ms, passed (None while the ramp has not said)."""
    reader = StoreReader(store)
    phases = {p["name"]: p for p in reader.phases(run)}
    default = run_sides(store, run)[0][0] if phases else ""  # a one-target run: its engine
    out = []
    for step in reader.ramp_steps(run):
        phase = phases.get(step["ramp"])
        out.append(
            {
                "run_id": run,
                "target": _target(phase, default),
                "phase": step["ramp"],
                "label": step["label"],
                "level": step["asked"],
                "ops_per_s": step["achieved_ops_per_s"],
                "p50_ms": step["p50_ms"],
                "p90_ms": step["p90_ms"],
                "p99_ms": step["p99_ms"],
                "passed": step["passed"],
            }
        )
    return out
