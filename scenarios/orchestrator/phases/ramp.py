"""`ramp`: stepped rates (or users) until p99 or the error rate crosses its bound.

Reports the highest throughput that met the target: what experiment 1 did by hand
at 40, 50 and 60 requests/s. That is the passing step with the most ops/s, which is
not always the last one: with users (closed model) more users can give fewer ops/s.

Each step is judged on its whole seconds after the first one (the rate change settles);
``RampPhase`` asks for steps of at least 3 s so that at least one second is judged.
"""

from __future__ import annotations

from typing import Any

from loadtower.scenarios.models import RampPhase
from loadtower.scenarios.orchestrator.context import PhaseContext
from loadtower.scenarios.orchestrator.live_stats import WindowSummary

SETTLE_S = 1.0  # seconds at the start of a step that are not judged (the rate change settles)


def judged_seconds(start: float, end: float) -> tuple[int, int]:
    """The whole seconds [t0, t1) of a step that started at `start` and ended at `end`."""
    return int(start + SETTLE_S) + 1, int(end)


def verdict(window: WindowSummary, phase: RampPhase) -> str | None:
    """Why a step failed, or None when it passed."""
    if window.ops == 0:
        return "no ops in the judged seconds"
    if window.p99_ms > phase.target_p99_ms:
        return f"p99 {window.p99_ms:.2f} ms > {phase.target_p99_ms:g} ms"
    if window.error_rate > phase.max_error_rate:
        return f"error rate {window.error_rate:.2%} > {phase.max_error_rate:.2%}"
    return None


def best_step(steps: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The passing step with the highest throughput (the lower level on a tie)."""
    passing = [s for s in steps if s["passed"]]
    return max(passing, key=lambda s: (s["ops_per_s"], -s["level"])) if passing else None


async def run_phase(ctx: PhaseContext, index: int, phase: RampPhase) -> dict[str, Any]:
    steps: list[float] = list(phase.rates or phase.users or [])
    open_model = phase.rates is not None
    unit = "ops/s" if open_model else "users"
    results: list[dict[str, Any]] = []
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
        t0, t1 = judged_seconds(start, end)
        window = ctx.stats.window(t0, t1)
        reason = verdict(window, phase)
        step = {
            "step": number,
            "level": level,
            "judged_from": t0,
            "judged_seconds": max(0, t1 - t0),
            "ops_per_s": round(window.ops_per_s, 1),
            "p50_ms": window.p50_ms,
            "p99_ms": window.p99_ms,
            "errors": window.errors,
            "error_rate": round(window.error_rate, 5),
            "passed": reason is None,
        }
        if reason:
            step["reason"] = reason
        results.append(step)
        ctx.event(
            "ramp_step",
            f"step {number} at {level:g} {unit}: {window.ops_per_s:,.1f} ops/s, "
            f"p99 {window.p99_ms:.2f} ms, errors {window.error_rate:.2%}: "
            + ("passed" if reason is None else f"FAILED ({reason})"),
            data=step,
        )
        if reason is not None:
            failed = step
            break
    best = best_step(results)
    last_passing = next((s for s in reversed(results) if s["passed"]), None)
    summary = {
        "steps": results,
        "unit": unit,
        "target_p99_ms": phase.target_p99_ms,
        "max_error_rate": phase.max_error_rate,
        # the passing step with the most ops/s: the saturation figure
        "best_step": best["step"] if best else None,
        "best_level": best["level"] if best else None,
        "highest_passing_ops_per_s": best["ops_per_s"] if best else None,
        # the highest level that passed (the step before the one that failed)
        "highest_passing_level": last_passing["level"] if last_passing else None,
        "first_failing_level": failed["level"] if failed else None,
        "stop_reason": failed["reason"] if failed else None,
    }
    if best:
        message = (
            f"saturation: highest throughput meeting p99 <= {phase.target_p99_ms:g} ms was "
            f"{best['ops_per_s']:,.1f} ops/s (step {best['step']} at {best['level']:g} {unit})"
        )
    else:
        message = f"saturation: no step met p99 <= {phase.target_p99_ms:g} ms"
    if failed:
        message += f"; step {failed['step']} at {failed['level']:g} {unit} failed: {failed['reason']}"
    ctx.event("ramp_result", message, data=summary)
    return summary
