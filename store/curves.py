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


def rates_at_target(store: Path | str, run: str) -> list[dict[str, Any]]:
    """The rate each ramp of `run` holds at its latency target: ``run_id``, ``target``,
    ``phase``, ``kind``, ``target_text`` (``p99 <= 100 ms``), ``rate`` (the passing step
    with the most achieved ops/s; None when no step passed), ``achieved_ops_per_s``,
    ``bracket`` ([that rate, the first failing step's]), ``confirmed`` (None: a ramp
    does not confirm) and ``source`` (which step gave the rate)."""
    reader = StoreReader(store)
    points = latency_curve(store, run)
    out = []
    for phase in reader.phases(run):
        if phase["type"] != "ramp":
            continue
        params = phase["params"] if isinstance(phase["params"], dict) else {}
        result = phase["result"] if isinstance(phase["result"], dict) else {}
        target_ms = result.get("target_p99_ms", params.get("target_p99_ms"))
        mine = [p for p in points if p["phase"] == phase["name"]]
        passing = [p for p in mine if p["passed"]]
        best = max(passing, key=lambda p: p["ops_per_s"] or 0.0) if passing else None
        failing = next((p for p in mine if p["passed"] is False), None)
        out.append(
            {
                "run_id": run,
                "target": mine[0]["target"] if mine else str(params.get("target") or ""),
                "phase": phase["name"],
                "kind": "ramp",
                "target_text": f"p99 <= {target_ms:g} ms" if target_ms is not None else None,
                "rate": best["ops_per_s"] if best else None,
                "achieved_ops_per_s": best["ops_per_s"] if best else None,
                "bracket": [best["ops_per_s"] if best else None,
                            failing["ops_per_s"] if failing else None],  # fmt: skip
                "confirmed": None,
                "source": f"ramp: highest passing step {best['label']}" if best
                else "ramp: no step passed",
            }
        )
    return out
