"""`search`: the highest rate that meets the target, found by bracketing, bisection and
a confirmation step (``loadtower.orchestrator.search_plan``).

Each step runs as a ramp step does (``ramp.run_step``): under its own phase label
(``find@800``; a rate asked again, e.g. the confirmation, gets its step's number:
``find@800#7``), drained at its end, judged on that label's figures after its stop ack:
the figures phase_summary, ``compare`` and the report show for that step. A step
passes when p99 (and/or p99.9) is within its target, the error rate within
``max_error_rate`` and the achieved rate at least ``min_achieved`` of the rate asked
(a loader or a database that cannot keep up fails the step even with good latencies).

The result (the phase's ``phases`` row, read by the ``search_result`` view and
``StoreReader.search_results``): ``found`` (the rate), ``found_ops_per_s`` (what its
last passing step at that rate achieved), ``bracket`` [pass, fail], ``resolution``,
``confirmed``, the target and ``steps`` (as a ramp's).
"""

from __future__ import annotations

from typing import Any

from loadtower.orchestrator.context import PhaseContext
from loadtower.orchestrator.live_stats import WindowSummary
from loadtower.orchestrator.phases.ramp import run_step
from loadtower.orchestrator.search_plan import RateSearch, bounds_of
from loadtower.scenarios.models import SearchPhase
from loadtower.store.ramp_steps import step_label


def target_text(phase: SearchPhase) -> str:
    """The target in words: ``p99 <= 50 ms, errors <= 1%, achieved >= 95%``."""
    parts = []
    if phase.target_p99_ms is not None:
        parts.append(f"p99 <= {phase.target_p99_ms:g} ms")
    if phase.target_p999_ms is not None:
        parts.append(f"p99.9 <= {phase.target_p999_ms:g} ms")
    parts.append(f"errors <= {phase.max_error_rate:.2%}")
    parts.append(f"achieved >= {phase.min_achieved:.0%} of asked")
    return ", ".join(parts)


def verdict(figures: WindowSummary, asked: float, phase: SearchPhase) -> str | None:
    """Why a search step failed, or None when it passed."""
    if figures.ops == 0:
        return "no ops in the step"
    if phase.target_p99_ms is not None and figures.p99_ms > phase.target_p99_ms:
        return f"p99 {figures.p99_ms:.2f} ms > {phase.target_p99_ms:g} ms"
    if phase.target_p999_ms is not None and figures.p999_ms > phase.target_p999_ms:
        return f"p99.9 {figures.p999_ms:.2f} ms > {phase.target_p999_ms:g} ms"
    if figures.error_rate > phase.max_error_rate:
        return f"error rate {figures.error_rate:.2%} > {phase.max_error_rate:.2%}"
    if figures.ops_per_s < phase.min_achieved * asked:
        return (
            f"achieved {figures.ops_per_s:,.1f} ops/s < {phase.min_achieved:.0%} of "
            f"{asked:g} asked"
        )
    return None


async def run_phase(ctx: PhaseContext, index: int, phase: SearchPhase) -> dict[str, Any]:
    bounds = bounds_of(phase)
    search = RateSearch(bounds)
    results: list[dict[str, Any]] = []
    taken: set[str] = set()
    began = ctx.clock()
    while not ctx.control.interrupted:
        asked = search.next_rate()
        if asked is None:
            break
        rate, stage = asked
        number = len(results) + 1
        label = step_label(ctx.current_phase, rate, number, taken)
        taken.add(label)
        step = await run_step(
            ctx, index, label, number, rate, True, phase.step_duration,
            lambda figures, level: verdict(figures, level, phase),
        )  # fmt: skip
        step["stage"] = stage
        results.append(step)
        search.record(rate, step["passed"])
        ctx.event(
            "search_step",
            f"step {number} ({stage}, {label}) at {rate:g} ops/s: "
            f"{step['ops_per_s']:,.1f} ops/s, p99 {step['p99_ms']:.2f} ms, "
            f"errors {step['error_rate']:.2%}: "
            + ("passed" if step["passed"] else f"FAILED ({step['why']})")
            + f"; bracket [{_rate(search.low)}, {_rate(search.high)}]",
            data=step,
        )
    if not search.done:
        search.stop_reason = "interrupted"
        search.found = search.low
    found = search.found
    at_found = [s for s in results if s["passed"] and s["level"] == found]
    summary: dict[str, Any] = {
        "steps": results,
        "unit": "ops/s",
        "target": target_text(phase),
        "target_p99_ms": phase.target_p99_ms,
        "target_p999_ms": phase.target_p999_ms,
        "max_error_rate": phase.max_error_rate,
        "min_achieved": phase.min_achieved,
        "found": found,
        # what the last passing step at the rate found achieved (the confirmation's)
        "found_ops_per_s": at_found[-1]["ops_per_s"] if at_found else None,
        "bracket": search.bracket,
        "resolution": bounds.resolution_text(),
        # False when it ended wider (failed confirmations lowered its top, none confirmed
        # its bottom): the summary then says "wider than", never "within"
        "within_resolution": search.low is not None and search.high is not None
        and bounds.close_enough(search.low, search.high),
        "confirmed": search.confirmed,
        "stop_reason": search.stop_reason,
        "search_s": round(ctx.clock() - began, 1),
    }
    if found is None:
        message = f"search: no rate met {summary['target']} ({search.stop_reason})"
    else:
        message = (
            f"search: highest rate meeting {summary['target']}: {found:g} ops/s "
            f"({_rate(summary['found_ops_per_s'])} achieved), bracket [{_rate(search.low)}, "
            f"{_rate(search.high)}] {within_text(summary)} {summary['resolution']}, "
            + ("confirmed" if search.confirmed else "NOT confirmed")
            + f" ({search.stop_reason}; {len(results)} steps)"
        )
    ctx.event("search_result", message, data=summary)
    return summary


def within_text(result: dict[str, Any]) -> str:
    """How a search's bracket stands to its resolution, in words (stored results from
    before ``within_resolution`` say "within", as they did)."""
    return "within" if result.get("within_resolution", True) else "wider than"


def _rate(value: float | None) -> str:
    return "-" if value is None else f"{value:,.1f}" if value % 1 else f"{value:,.0f}"
