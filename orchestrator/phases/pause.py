"""`pause`: wait (no load), e.g. to let TTLs expire."""

from __future__ import annotations

from typing import Any

from loadtower.orchestrator.context import PhaseContext
from loadtower.scenarios.models import PausePhase


async def run_phase(ctx: PhaseContext, index: int, phase: PausePhase) -> dict[str, Any]:
    start = ctx.clock()
    await ctx.control.sleep(phase.duration)
    return {"duration_s": round(ctx.clock() - start, 3)}
