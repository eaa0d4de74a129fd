"""`run`: a workload mix for a duration, open model (rate) or closed model (users)."""

from __future__ import annotations

from typing import Any

from loadtower.scenarios.models import RunPhase
from loadtower.scenarios.orchestrator.context import PhaseContext


async def run_phase(ctx: PhaseContext, index: int, phase: RunPhase) -> dict[str, Any]:
    start = ctx.clock()
    await ctx.load.start(
        ctx.current_phase,
        ctx.spec(index),
        mode="run",
        rate=phase.rate,
        users=phase.users,
        think_time=phase.think_time,
        duration=phase.duration,
    )
    await ctx.control.sleep(phase.duration)
    await ctx.load.stop()
    end = ctx.clock()
    window = ctx.stats.window(start, end + 1)
    return {
        "duration_s": round(end - start, 3),
        "ops": window.ops,
        "ops_per_s": round(window.ops / max(end - start, 1e-9), 1),
        "errors": window.errors,
        "late": window.late,
        "p99_ms": window.p99_ms,
    }
