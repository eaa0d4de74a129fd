"""Before/during/after figures of a phase that changes the cluster under load
(compaction, scale_out, fault): only for the windows in which load ran.

A window is whole completion seconds of the phase's own ops (its label's, so a late op
of the phase before is never counted here). A window without ops has no figures (None)
and the result's ``notes`` say "no load ran before" (or during, after): a p99 of 0 ms
where nothing ran would read as a measurement. A window that starts before the live
figures' kept seconds (LiveStats.keep_s) has no figures either, and a note says so.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from loadtower.orchestrator.context import PhaseContext
from loadtower.orchestrator.live_stats import WindowSummary


def _value(window: WindowSummary, metric: str) -> Any:
    if metric == "ops_per_s":
        return round(window.ops_per_s, 1)
    if metric == "errors_by_class":
        return dict(sorted(window.errors_by_class.items()))
    return getattr(window, metric)


def impact(
    ctx: PhaseContext,
    windows: Mapping[str, tuple[float, float]],
    metrics: dict[str, tuple[str, ...]],
) -> dict[str, Any]:
    """``{METRIC_WINDOW: value}`` for each window name -> [t0, t1) and the metrics
    asked for it, plus ``load_ran`` per window and ``notes`` for the empty ones."""
    out: dict[str, Any] = {}
    ran: dict[str, bool] = {}
    notes: list[str] = []
    for name, (t0, t1) in windows.items():
        window = ctx.stats.window(t0, max(t1, t0), phase=ctx.current_phase)
        ran[name] = window.ops > 0
        whole = ctx.stats.whole_from(t0)
        for metric in metrics.get(name, ()):
            out[f"{metric}_{name}"] = _value(window, metric) if ran[name] and whole else None
        if not ran[name]:
            notes.append(f"no load ran {name}")
        elif not whole:
            notes.append(f"{name}: its start is older than the live figures keep "
                         f"({ctx.stats.keep_s // 3600} h): see the store's op_second rows")
    out["load_ran"] = ran
    if notes:
        out["notes"] = notes
    return out


def p99_text(result: dict[str, Any], name: str) -> str:
    """``p99 1.23 ms before`` or ``no load ran before``: for messages and notes."""
    value = result.get(f"p99_ms_{name}")
    return f"no load ran {name}" if value is None else f"p99 {value:.2f} ms {name}"
