"""`ramp`: stepped rates (or users) until p99 or the error rate crosses its bound.

Reports the highest throughput that met the target: what experiment 1 did by hand
at 40, 50 and 60 requests/s. That is the passing step with the most ops/s, which is
not always the last one: with users (closed model) more users can give fewer ops/s.

Each step runs under its own phase label (``saturation@40``, see
``loadtower.store.ramp_steps``): the agents drain it at its end, so its late ops stay
in it, and the store keeps one phase_summary row per step. A step is judged on that
label's figures after its stop ack: every op scheduled in the step, its rate over its
measured duration (``loadtower.store.phase_rate``): the figures phase_summary,
``compare`` and the report show for that step.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from loadtower.orchestrator.context import PhaseContext
from loadtower.orchestrator.live_stats import WindowSummary
from loadtower.scenarios.models import RampPhase
from loadtower.store.ramp_steps import step_label


def verdict(window: WindowSummary, phase: RampPhase) -> str | None:
    """Why a step failed, or None when it passed."""
    if window.ops == 0:
        return "no ops in the step"
    if window.p99_ms > phase.target_p99_ms:
        return f"p99 {window.p99_ms:.2f} ms > {phase.target_p99_ms:g} ms"
    if window.error_rate > phase.max_error_rate:
        return f"error rate {window.error_rate:.2%} > {phase.max_error_rate:.2%}"
    return None


def best_step(steps: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The passing step with the highest throughput (the lower level on a tie)."""
    passing = [s for s in steps if s["passed"]]
    return max(passing, key=lambda s: (s["ops_per_s"], -s["level"])) if passing else None


async def run_step(
    ctx: PhaseContext,
    index: int,
    label: str,
    number: int,
    level: float,
    open_model: bool,
    duration: float,
    judge: Callable[[WindowSummary, float], str | None],
) -> dict[str, Any]:
    """Run one step under its own phase label and judge it after its stop ack (the
    ramp's and the search's steps): its result row, as the phase results keep it."""
    await ctx.load.start(
        label,
        ctx.spec(index),
        mode="run",
        rate=level if open_model else None,
        users=None if open_model else int(level),
        duration=duration,
    )
    await ctx.control.sleep(duration)
    await ctx.load.stop()  # acknowledged once every line of the step is in
    # a step has no `phases` row: without spans its duration is its completion
    # seconds, live as in the store (phase_rate.measured_duration)
    figures = ctx.stats.phase(label)
    reason = judge(figures, level)
    step: dict[str, Any] = {
        "label": label,
        "step": number,
        "asked": level,
        "level": level,
        "unit": "ops/s" if open_model else "users",
        "ops": figures.ops,
        "duration_s": round(figures.duration_s or 0.0, 3),
        "achieved_ops_per_s": figures.ops_per_s,
        "ops_per_s": figures.ops_per_s,
        "p50_ms": figures.p50_ms,
        "p90_ms": figures.p90_ms,
        "p99_ms": figures.p99_ms,
        "p999_ms": figures.p999_ms,
        "errors": figures.errors,
        "error_rate": round(figures.error_rate, 5),
        "passed": reason is None,
        "why": reason,
    }
    if reason:
        step["reason"] = reason
    return step


async def run_phase(ctx: PhaseContext, index: int, phase: RampPhase) -> dict[str, Any]:
    steps: list[float] = list(phase.rates or phase.users or [])
    open_model = phase.rates is not None
    unit = "ops/s" if open_model else "users"
    results: list[dict[str, Any]] = []
    failed: dict[str, Any] | None = None
    taken: set[str] = set()
    for number, level in enumerate(steps, start=1):
        if ctx.control.interrupted:
            break
        label = step_label(ctx.current_phase, level, number, taken)
        taken.add(label)
        step = await run_step(
            ctx, index, label, number, level, open_model, phase.step_duration,
            lambda figures, _level: verdict(figures, phase),
        )  # fmt: skip
        reason = step["why"]
        results.append(step)
        ctx.event(
            "ramp_step",
            f"step {number} ({label}) at {level:g} {unit}: {step['ops_per_s']:,.1f} ops/s, "
            f"p99 {step['p99_ms']:.2f} ms, errors {step['error_rate']:.2%}: "
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
        message += (
            f"; step {failed['step']} at {failed['level']:g} {unit} failed: {failed['reason']}"
        )
    ctx.event("ramp_result", message, data=summary)
    return summary
