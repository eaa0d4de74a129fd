"""`load`: insert the dataset (N records at a given concurrency), reporting the insert rate."""

from __future__ import annotations

from typing import Any

from loadtower.scenarios.models import LoadPhase
from loadtower.scenarios.orchestrator.context import PhaseContext


async def run_phase(ctx: PhaseContext, index: int, phase: LoadPhase) -> dict[str, Any]:
    records = phase.records or ctx.plan.scenario.dataset.records
    start = ctx.clock()
    await ctx.load.start(
        ctx.current_phase,
        ctx.spec(index),
        mode="load",
        records=records,
        concurrency=phase.concurrency,
    )
    finished = False
    while not ctx.control.interrupted:
        if await ctx.load.wait_done(timeout=0.5):
            finished = True
            break
    if not finished:
        await ctx.load.stop()
    took = max(ctx.clock() - start, 1e-9)
    window = ctx.stats.window(start - 1, ctx.clock() + 1)
    result = {
        "records": records,
        "inserted_ops": window.ops,
        "errors": window.errors,
        "duration_s": round(took, 3),
        "insert_rate": round(window.ops / took, 1),
        "completed": finished,
    }
    ctx.event(
        "load",
        f"loaded {window.ops:,} ops in {took:.1f} s ({window.ops / took:,.0f} ops/s, "
        f"{window.errors} errors)",
        data=result,
    )
    return result
