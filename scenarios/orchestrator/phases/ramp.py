"""`ramp`: stepped rates (or users) until p99 or the error rate crosses its bound.

Reports the highest throughput that met the target: what experiment 1 did by hand
at 40, 50 and 60 requests/s.
"""

from __future__ import annotations

from typing import Any

from loadtower.scenarios.models import RampPhase
from loadtower.scenarios.orchestrator.context import PhaseContext

SETTLE_S = 1.0  # seconds at the start of a step that are not judged (the rate change settles)


async def run_phase(ctx: PhaseContext, index: int, phase: RampPhase) -> dict[str, Any]:
    steps: list[float] = list(phase.rates or phase.users or [])
    open_model = phase.rates is not None
    results: list[dict[str, Any]] = []
    best: dict[str, Any] | None = None
    failed: dict[str, Any] | None = None
    for number, level in enumerate(steps, start=1):
        if ctx.control.interrupted:
            break
        start = ctx.clock()
        await ctx.load.start(
            f"{ctx.current_phase}",
            ctx.spec(index),
            mode="run",
            rate=level if open_model else None,
            users=None if open_model else int(level),
            duration=phase.step_duration,
        )
        await ctx.control.sleep(phase.step_duration)
        end = ctx.clock()
        await ctx.load.stop()
        window = ctx.stats.window(int(start + SETTLE_S) + 1, int(end))
        step = {
            "step": number,
            "level": level,
            "ops_per_s": round(window.ops_per_s, 1),
            "p50_ms": window.p50_ms,
            "p99_ms": window.p99_ms,
            "errors": window.errors,
            "error_rate": round(window.error_rate, 5),
        }
        passed = (
            window.ops > 0
            and window.p99_ms <= phase.target_p99_ms
            and window.error_rate <= phase.max_error_rate
        )
        step["passed"] = passed
        results.append(step)
        unit = "ops/s" if open_model else "users"
        verdict = "passed" if passed else "FAILED"
        ctx.event(
            "ramp_step",
            f"step {number} at {level:g} {unit}: {window.ops_per_s:,.1f} ops/s, "
            f"p99 {window.p99_ms:.2f} ms, errors {window.error_rate:.2%}: {verdict}",
            data=step,
        )
        if not passed:
            failed = step
            break
        best = step
    summary = {
        "steps": results,
        "target_p99_ms": phase.target_p99_ms,
        "max_error_rate": phase.max_error_rate,
        "highest_passing_level": best["level"] if best else None,
        "highest_passing_ops_per_s": best["ops_per_s"] if best else None,
        "first_failing_level": failed["level"] if failed else None,
    }
    if best:
        message = (
            f"saturation: highest throughput meeting p99 <= {phase.target_p99_ms:g} ms was "
            f"{best['ops_per_s']:,.1f} ops/s (step {best['step']} at {best['level']:g})"
        )
    else:
        message = f"saturation: no step met p99 <= {phase.target_p99_ms:g} ms"
    ctx.event("ramp_result", message, data=summary)
    return summary
