"""`run`: a workload mix for a duration, open model (rate) or closed model (users).

The result's figures are the phase label's (``LiveStats.phase``), read after the stop
ack: every op scheduled in the phase, however late it completed, and none of another
phase's; its rate is ``loadtower.store.phase_rate``'s (ops over the measured duration),
the figure the store's phase_summary gives. While it runs, the operator may steer its
rate or users (steering.py); its result then lists the changes.
"""

from __future__ import annotations

from typing import Any

from loadtower.orchestrator.context import PhaseContext
from loadtower.orchestrator.steering import Steering
from loadtower.scenarios.models import SteadyPhase


async def run_phase(ctx: PhaseContext, index: int, phase: SteadyPhase) -> dict[str, Any]:
    label = ctx.current_phase
    start = ctx.clock()
    await ctx.load.start(
        label,
        ctx.spec(index),
        mode="run",
        rate=phase.rate,
        users=phase.users,
        think_time=phase.think_time,
        duration=phase.duration,
    )
    kind, level = ("rate", phase.rate) if phase.rate else ("users", phase.users or 1)
    steering = Steering(ctx, label, kind, float(level), start)
    ctx.control.steer = steering  # the operator may change the load until its stop
    try:
        await ctx.control.sleep(phase.duration)
    finally:
        ctx.control.steer = None
    await ctx.load.stop()  # acknowledged once every line of the phase is in
    figures = ctx.figures(start)
    end = ctx.clock()
    return steering.result() | {
        "duration_s": round(end - start, 3),
        "measured_s": round(figures.duration_s or 0.0, 3),
        "ops": figures.ops,
        "ops_per_s": figures.ops_per_s,
        "errors": figures.errors,
        "late": figures.late,
        "p50_ms": figures.p50_ms,
        "p90_ms": figures.p90_ms,
        "p99_ms": figures.p99_ms,
    }
