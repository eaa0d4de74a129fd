"""`fault`: stop, kill, pause or restart a node through its declared action, under load.

The result compares the seconds before the action with those after it: ops/s, errors
(and their classes: the driver's exception names, e.g. Unavailable, WriteTimeout), p99
and the slowest op. Failed ops never end the run; they are counted by class. Each side
has figures only when load ran in it (``impact.py``: otherwise "no load ran before").
"""

from __future__ import annotations

from typing import Any

from loadtower.orchestrator.context import PhaseContext, failure_message
from loadtower.orchestrator.phases.impact import impact
from loadtower.scenarios.models import FaultPhase


async def run_phase(ctx: PhaseContext, index: int, phase: FaultPhase) -> dict[str, Any]:
    loaded = await ctx.background_load(index, phase, duration=phase.duration)
    start = ctx.clock()
    await ctx.control.sleep(phase.after)
    result: dict[str, Any] = {"host": phase.host, "action": phase.action}
    fault_at = ctx.clock()
    if not ctx.control.interrupted:
        status, out, err, took = await ctx.action(phase.host, phase.action)
        result.update(
            {
                "exit_status": status,
                "action_s": round(took, 2),
                "at_s": round(fault_at - start, 1),  # when the action began
            }
        )
        if status != 0:
            result["error"] = failure_message(status, out, err)
        ctx.event(
            "fault",
            f"fault '{phase.action}' on {phase.host}"
            + ("" if status == 0 else f" failed: {result['error']}"),
            host=phase.host,
            data=result,
        )
    await ctx.control.sleep(max(0.0, phase.duration - (ctx.clock() - start)))
    if loaded:
        await ctx.load.stop()
    # Samples are per whole second: the second in which the action began may already
    # hold ops that failed because of it, so "before" ends at the start of that second.
    windows = {"before": (start, int(fault_at)), "after": (int(fault_at), ctx.clock())}
    result.update(
        impact(
            ctx,
            windows,
            {
                "before": ("ops_per_s", "errors", "p99_ms"),
                "after": ("ops_per_s", "errors", "errors_by_class", "p99_ms", "max_ms"),
            },
        )
    )
    return result
