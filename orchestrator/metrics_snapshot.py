"""The figures the metrics endpoint shows, read from the run's live state (``Sinks``:
its ``LiveStats``, the phase under way, the newest node samples) in one go, on the
event loop that writes that state, as plain frozen data for the scrape's thread.

Per-second figures are those of the last complete completion second
(``LiveStats.last_complete_second``), per phase label and op: its ops (the store's
``op_seconds.ops``) and the percentiles of every agent's histograms of that second
merged (the store's ``p50_ms`` ... ``p999_ms``; never an average of agents'
percentiles). Totals are every op of the run so far (the store's ``op_phase`` counts).
Every name from a file or an agent (phase, op, error class, agent, host) has the run's
known secrets masked, as everything the store gets.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from loadtower.orchestrator.sinks import Sinks

# the `quantile` label's values and the LiveStats figure (ms) each one is
QUANTILES = (("0.5", "p50_ms"), ("0.9", "p90_ms"), ("0.99", "p99_ms"), ("0.999", "p999_ms"))


@dataclass(frozen=True)
class OpSecond:
    """One phase label's op in the last complete second."""

    phase: str
    op: str
    ops: int
    latency_s: dict[str, float]  # quantile -> seconds; empty: no latency in that second


@dataclass(frozen=True)
class OpTotal:
    """One phase label's op over the run so far."""

    phase: str
    op: str
    ops: int
    late: int
    errors: dict[str, int]  # error class -> count


@dataclass(frozen=True)
class MetricsSnapshot:
    run_id: str
    phase: str  # the phase label under way ("" between phases)
    second: int | None  # the last complete second (unix time of its start)
    seconds: tuple[OpSecond, ...]
    totals: tuple[OpTotal, ...]
    agent_cpu: dict[str, float]  # agent -> CPU % of its newest line
    nodes: dict[str, dict[str, float]]  # host -> cpu_pct, mem_used_bytes, mem_total_bytes


def take_snapshot(sinks: Sinks, now: float) -> MetricsSnapshot:
    """The figures of `sinks` at `now` (call it on the loop that feeds `sinks`)."""
    stats, mask = sinks.stats, sinks.mask
    second = stats.last_complete_second(now)
    cells = stats.second_cells(second) if second is not None else {}
    seconds = [
        OpSecond(
            mask(phase),
            mask(op),
            summary.ops,
            # max_ms is 0 only for an empty histogram (every value is 1 us or more)
            {q: in_seconds(getattr(summary, name)) for q, name in QUANTILES}
            if summary.max_ms > 0 else {},
        )
        for (phase, op), summary in cells.items()
    ]
    if second is not None:  # the phase under way: an op with no completion is 0 ops/s
        seconds += [OpSecond(mask(phase), mask(op), 0, {}) for phase, op in stats.totals
                    if phase == sinks.phase and (phase, op) not in cells]
    totals = tuple(
        OpTotal(mask(phase), mask(op), counts.ops, counts.late,
                {mask(name): count for name, count in counts.errors_by_class.items()})
        for (phase, op), counts in stats.totals.items()
    )
    return MetricsSnapshot(
        run_id=sinks.run_id,
        phase=mask(sinks.phase),
        second=second,
        seconds=tuple(seconds),
        totals=totals,
        agent_cpu={mask(agent): cpu for agent, cpu in stats.agent_cpu.items()},
        nodes={mask(host): dict(figures) for host, figures in sinks.node_latest.items()},
    )


def in_seconds(ms: float) -> float:
    """An HDR value (whole microseconds) given in ms, in seconds: rounded to the
    microsecond it is, so 1.12 ms is 0.00112 s, not 0.0011200000000000001."""
    return round(ms / 1000.0, 6)
