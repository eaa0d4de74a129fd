"""Per-second merged stats of the running load, for ramp decisions and the live display.

Histograms from every agent are merged (HDR add), never averaged.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from hdrh.histogram import HdrHistogram

from loadtower.agents.measure import decode

LOWEST, HIGHEST, DIGITS = 1, 60_000_000, 3


def new_histogram() -> HdrHistogram:
    return HdrHistogram(LOWEST, HIGHEST, DIGITS)


@dataclass
class SecondStats:
    ops: int = 0
    errors: int = 0
    late: int = 0
    errors_by_class: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    hist: HdrHistogram = field(default_factory=new_histogram)


@dataclass(frozen=True)
class WindowSummary:
    ops: int
    errors: int
    late: int
    seconds: int
    p50_ms: float
    p90_ms: float
    p99_ms: float
    max_ms: float
    errors_by_class: dict[str, int] = field(default_factory=dict)

    @property
    def ops_per_s(self) -> float:
        return self.ops / self.seconds if self.seconds else 0.0

    @property
    def error_rate(self) -> float:
        return self.errors / self.ops if self.ops else 0.0


class LiveStats:
    """Merges agent interval lines per second (all ops, and per op)."""

    def __init__(self, kind: str = "response_hist") -> None:
        self.kind = kind
        self.seconds: dict[int, SecondStats] = defaultdict(SecondStats)
        self.per_op: dict[tuple[int, str], SecondStats] = defaultdict(SecondStats)
        self.agent_cpu: dict[str, float] = {}

    def add(self, line: dict) -> None:
        ts = int(line["ts"])
        self.agent_cpu[str(line.get("agent", "?"))] = float(line.get("cpu_pct", 0.0))
        total = self.seconds[ts]
        for op, sample in (line.get("ops") or {}).items():
            encoded = sample.get(self.kind) or sample.get("service_hist")
            hist = decode(encoded) if encoded else None
            errors = int(sum((sample.get("errors") or {}).values()))
            for stats in (total, self.per_op[(ts, op)]):
                stats.ops += int(sample.get("ops", 0))
                stats.errors += errors
                stats.late += int(sample.get("late", 0))
                for name, count in (sample.get("errors") or {}).items():
                    stats.errors_by_class[name] += int(count)
                if hist is not None:
                    stats.hist.add(hist)

    def window(self, t0: float, t1: float, op: str | None = None) -> WindowSummary:
        """Merged stats over seconds in [t0, t1)."""
        merged = new_histogram()
        ops = errors = late = 0
        classes: dict[str, int] = {}
        seconds = set()
        if op is None:
            items = [(ts, s) for ts, s in self.seconds.items() if t0 <= ts < t1]
        else:
            items = [(ts, s) for (ts, o), s in self.per_op.items() if o == op and t0 <= ts < t1]
        for ts, stats in items:
            seconds.add(ts)
            ops += stats.ops
            errors += stats.errors
            late += stats.late
            for name, count in stats.errors_by_class.items():
                classes[name] = classes.get(name, 0) + count
            merged.add(stats.hist)
        span = max(1, int(t1 - t0)) if items else 0

        def pct(p: float) -> float:
            return merged.get_value_at_percentile(p) / 1000.0 if merged.get_total_count() else 0.0

        return WindowSummary(
            ops,
            errors,
            late,
            span,
            pct(50),
            pct(90),
            pct(99),
            merged.get_max_value() / 1000.0 if merged.get_total_count() else 0.0,
            classes,
        )

    def latest(self, now: float, span: int = 1) -> WindowSummary:
        """The last complete `span` seconds before `now`."""
        end = int(now)
        return self.window(end - span, end)

    def ops_in(self, op: str, t0: float, t1: float) -> int:
        return sum(s.ops for (ts, o), s in self.per_op.items() if o == op and t0 <= ts < t1)
