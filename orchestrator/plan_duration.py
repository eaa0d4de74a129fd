"""How long a plan is expected to take, for the live displays' elapsed/total.

Phases with a fixed length count with it (`run`, `pause`, `fault`; a `ramp` with all its
steps, its longest case; a `search` with the steps
it is expected to take). Phases that last as long as their work (`load`, and the waits
of `scale_out` and `compaction`) count with their fixed parts only, so the total is then
a floor, shown with a "+". While a run goes, the time already spent replaces the plan's
figures for the phases behind it, so the total follows what really happens.
"""

from __future__ import annotations

from typing import Any

from loadtower.orchestrator.search_plan import expected_steps
from loadtower.scenarios.models import (
    CompactionPhase,
    FaultPhase,
    PausePhase,
    RampPhase,
    ScaleOutPhase,
    Scenario,
    SearchPhase,
    SteadyPhase,
)

# the fixed waits of the phases that otherwise last as long as their work
SCALE_OUT_FIXED_S = 10.0  # steady load before the start and after the join (phases/scale_out.py)
COMPACTION_FIXED_S = 8.0  # 5 s before, 3 s after (phases/compaction.py)


def planned_seconds(phase: Any) -> tuple[float, bool]:
    """(seconds, exact) of one phase; exact is False when the figure is only a floor."""
    if isinstance(phase, SteadyPhase | PausePhase | FaultPhase):
        return float(phase.duration), True
    if isinstance(phase, RampPhase):
        return len(phase.rates or phase.users or []) * float(phase.step_duration), True
    if isinstance(phase, SearchPhase):  # as many steps as its bracket and bisection take
        return expected_steps(phase) * float(phase.step_duration), False
    if isinstance(phase, ScaleOutPhase):
        return SCALE_OUT_FIXED_S, False
    if isinstance(phase, CompactionPhase):
        return COMPACTION_FIXED_S, False
    return 0.0, False  # load: as long as the inserts take


def run_steps(scenario: Scenario) -> list[Any]:
    """Every phase the run goes through, in order (the phases once per target)."""
    return list(scenario.phases) * max(1, len(scenario.target_names()))


def expected_total(
    scenario: Scenario, started: float, now: float, step: int = -1, phase_started: float = 0.0
) -> tuple[float, bool]:
    """(expected total seconds from `started`, open-ended) while at phase `step` (-1:
    before the first phase) which started at `phase_started`."""
    plan = [planned_seconds(p) for p in run_steps(scenario)]
    if step < 0:
        ahead = plan
        spent = now - started
    else:
        ahead = plan[step + 1 :]
        current, exact = plan[step] if step < len(plan) else (0.0, True)
        in_phase = now - phase_started
        spent = (phase_started - started) + max(current, in_phase)
        if not exact:
            ahead = [(0.0, False), *ahead]
    total = spent + sum(seconds for seconds, _ in ahead)
    return total, any(not exact for _, exact in ahead)


def clock(seconds: float) -> str:
    """``m:ss`` (``h:mm:ss`` from an hour on)."""
    whole = max(0, int(seconds))
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"
