"""A scenario's ``[[thresholds]]``: checked against its phases, described for ``check``,
and judged against a phase's figures (the orchestrator's side is
``orchestrator/threshold_checks.py``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from loadtower.errors import ConfigError
from loadtower.scenarios.durations import format_duration
from loadtower.scenarios.models import FlushPhase, PausePhase, RampPhase, Scenario, Threshold
from loadtower.scenarios.toml_lines import LineIndex, format_path

UNITS = {"error_rate": "", "ops_per_s": " ops/s"}  # latency figures are in ms
# a figure's name in a phase's figures (live_stats.WindowSummary) per metric
FIGURES = {"p50": "p50_ms", "p90": "p90_ms", "p99": "p99_ms", "p999": "p999_ms",
           "max": "max_ms", "error_rate": "error_rate", "ops_per_s": "ops_per_s"}  # fmt: skip


def _no_ops(scenario: Scenario, index: int) -> str | None:
    """Why phase `index` has no figures of its own to judge, or None when it has."""
    phase = scenario.phases[index]
    if isinstance(phase, PausePhase | FlushPhase):
        return f"a {phase.type} phase runs no load"
    if isinstance(phase, RampPhase):
        return "a ramp judges its own steps (target_p99_ms, max_error_rate)"
    if phase.type != "load" and getattr(phase, "rate", None) is None and getattr(
        phase, "users", None
    ) is None:
        return f"this {phase.type} phase runs no load (give it 'rate' or 'users')"
    return None


def check_thresholds(scenario: Scenario, source: str, file: str) -> None:
    """Each threshold's phase is a phase of the scenario that runs load: one line naming
    file, line and key otherwise."""
    labels = [scenario.phase_label(i) for i in range(len(scenario.phases))]
    index = LineIndex(source)
    for j, threshold in enumerate(scenario.thresholds):
        if threshold.phase is None:
            continue
        path = ("thresholds", j, "phase")
        if threshold.phase not in labels:
            raise ConfigError(file, index.line_of(path), format_path(path),
                              f"unknown phase '{threshold.phase}' (phases: {', '.join(labels)})")
        why = _no_ops(scenario, labels.index(threshold.phase))
        if why:
            raise ConfigError(file, index.line_of(path), format_path(path),
                              f"phase '{threshold.phase}' has no figures to judge: {why}")


def _value(metric: str, value: float) -> str:
    if metric == "error_rate":
        return f"{value:.3%}"
    if metric == "ops_per_s":
        return f"{value:,.1f} ops/s"
    return f"{value:.2f} ms"


def _limit(metric: str, value: float) -> str:
    if metric == "error_rate":
        return f"{value * 100:g}%"
    return f"{value:g}{UNITS.get(metric, ' ms')}"


def describe(threshold: Threshold, phase: str | None = None) -> str:
    """'p99 of read in phase ycsb-a <= 20 ms' (`phase`: the label it was judged in)."""
    where = phase or threshold.phase
    text = f"{threshold.metric} of {f'op {threshold.op}' if threshold.op else 'every op'}"
    text += f" in phase {where}" if where else " in every phase with load"
    bounds = []
    if threshold.min is not None:
        bounds.append(f">= {_limit(threshold.metric, threshold.min)}")
    if threshold.max is not None:
        bounds.append(f"<= {_limit(threshold.metric, threshold.max)}")
    return f"{text} {' and '.join(bounds)}"


def threshold_lines(scenario: Scenario) -> list[str]:
    """One line per threshold, for ``loadtower check``."""
    out = []
    for threshold in scenario.thresholds:
        line = describe(threshold)
        if threshold.abort:
            line += f" (checked live from {format_duration(threshold.abort_after)}: a breach " \
                    "stops the run)"
        out.append(line)
    return out


@dataclass(frozen=True)
class Verdict:
    phase: str
    threshold: Threshold
    measured: float | None  # None: nothing of it was measured
    bound: str  # the bound it broke ('max' or 'min'), or the one it met ('max' first)
    passed: bool
    live: bool = False

    @property
    def target(self) -> str:
        return describe(self.threshold, self.phase)

    def line(self) -> str:
        """One line: the target and the measured figure."""
        if self.measured is None:
            return f"{self.target}: nothing measured"
        state = "met" if self.passed else "breached"
        return f"{self.target}: {state}, measured {_value(self.threshold.metric, self.measured)}"

    def row(self) -> dict[str, Any]:
        """The store's threshold_results columns."""
        limit = self.threshold.max if self.bound == "max" else self.threshold.min
        return {"phase": self.phase, "op": self.threshold.op, "metric": self.threshold.metric,
                "bound": self.bound, "threshold": limit, "measured": self.measured,
                "passed": self.passed, "live": self.live, "target": self.target}  # fmt: skip


def judge(threshold: Threshold, phase: str, figures: Any, live: bool = False) -> Verdict:
    """The verdict on a phase's `figures` (a live_stats.WindowSummary: the figures its
    result and phase_summary give); no ops measured is a breach."""
    if not figures.ops:
        return Verdict(phase, threshold, None, "max" if threshold.max is not None else "min",
                       False, live)  # fmt: skip
    value = float(getattr(figures, FIGURES[threshold.metric]))
    if threshold.max is not None and value > threshold.max:
        return Verdict(phase, threshold, value, "max", False, live)
    if threshold.min is not None and value < threshold.min:
        return Verdict(phase, threshold, value, "min", False, live)
    return Verdict(phase, threshold, value, "max" if threshold.max is not None else "min",
                   True, live)  # fmt: skip


def applies(threshold: Threshold, label: str) -> bool:
    """Whether `threshold` judges the phase whose scenario label (no target prefix) is
    `label`; a threshold without phase judges every phase that measured ops."""
    return threshold.phase is None or threshold.phase == label
