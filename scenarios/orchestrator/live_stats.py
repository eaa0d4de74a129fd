"""Merged stats of the running load: per phase label (the figures a phase reports) and
per completion second (the live display, and windows inside a phase).

Histograms from every agent are merged (HDR add), never averaged.

A phase's figures are keyed by the label its load was started under (``load.start``),
which the agents put in every interval line as ``phase``: the phase in which the ops
were *scheduled*. A backlog's late ops therefore stay in their own phase, whenever
they complete. Since the master acknowledges a stop (and a load's ``phase_done``) only
after every line of the phase and its drain events, a handler that reads
``phase(label)`` after the ack holds all of the phase's ops: the same count that the
store's ``op_phase`` rows and ``phase_summary`` hold, and the same rate
(``loadtower.store.phase_rate``).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from hdrh.histogram import HdrHistogram

from loadtower.store import phase_rate
from loadtower.store.hdr import add_counts, sparse_counts
from loadtower.store.phase_rate import line_span

LOWEST, HIGHEST, DIGITS = 1, 60_000_000, 3
# a completion second counts as complete this long after its end, whatever the agents sent
SETTLE_S = 2.0


def new_histogram() -> HdrHistogram:
    return HdrHistogram(LOWEST, HIGHEST, DIGITS)


@dataclass
class Counts:
    """Ops, errors (by class) and late ops of one line's op sample, or added up."""

    ops: int = 0
    errors: int = 0
    late: int = 0
    errors_by_class: dict[str, int] = field(default_factory=lambda: defaultdict(int))

    def count(self, sample: dict) -> None:
        """Add one op's sample of an interval line."""
        by_class = sample.get("errors") or {}
        self.ops += int(sample.get("ops", 0))
        self.errors += int(sum(by_class.values()))
        self.late += int(sample.get("late", 0))
        for name, count in by_class.items():
            self.errors_by_class[name] += int(count)


@dataclass
class SecondStats(Counts):
    hist: HdrHistogram = field(default_factory=new_histogram)


@dataclass
class PhaseSpan:
    """What the lines of one phase label say about when its ops ran."""

    first_start: float | None = None  # earliest intended start (lines' ``span``)
    last_done: float | None = None  # latest completion
    first_ts: int | None = None  # first and last completion second
    last_ts: int | None = None

    def add(self, ts: int, span: tuple[float, float] | None) -> None:
        self.first_ts = ts if self.first_ts is None else min(self.first_ts, ts)
        self.last_ts = ts if self.last_ts is None else max(self.last_ts, ts)
        if span is not None:
            first, last = self.first_start, self.last_done
            self.first_start = span[0] if first is None else min(first, span[0])
            self.last_done = span[1] if last is None else max(last, span[1])


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
    # a phase's measured duration (phase_rate.measured_duration); None for a time window
    duration_s: float | None = None
    p999_ms: float = 0.0

    @property
    def ops_per_s(self) -> float:
        if self.duration_s is not None:
            return phase_rate.ops_per_s(self.ops, self.duration_s)
        return self.ops / self.seconds if self.seconds else 0.0

    @property
    def error_rate(self) -> float:
        return self.errors / self.ops if self.ops else 0.0


def _summary(
    items: list[SecondStats], seconds: int, duration_s: float | None = None
) -> WindowSummary:
    merged = new_histogram()
    ops = errors = late = 0
    classes: dict[str, int] = {}
    for stats in items:
        ops += stats.ops
        errors += stats.errors
        late += stats.late
        for name, count in stats.errors_by_class.items():
            classes[name] = classes.get(name, 0) + count
        merged.add(stats.hist)

    def pct(p: float) -> float:
        return merged.get_value_at_percentile(p) / 1000.0 if merged.get_total_count() else 0.0

    return WindowSummary(
        ops,
        errors,
        late,
        seconds,
        pct(50),
        pct(90),
        pct(99),
        merged.get_max_value() / 1000.0 if merged.get_total_count() else 0.0,
        classes,
        duration_s,
        pct(99.9),
    )


class LiveStats:
    """Merges agent interval lines per phase label, per second and per op."""

    def __init__(self, kind: str = "response_hist") -> None:
        self.kind = kind
        self.seconds: dict[int, SecondStats] = defaultdict(SecondStats)
        # (phase label, second, op) -> what completed in that second for that phase's op
        self.cells: dict[tuple[str, int, str], SecondStats] = defaultdict(SecondStats)
        self.spans: dict[str, PhaseSpan] = defaultdict(PhaseSpan)
        self.agent_cpu: dict[str, float] = {}
        # (phase label, op) -> every op of the run so far (the store's op_phase counts)
        self.totals: dict[tuple[str, str], Counts] = defaultdict(Counts)
        self.agent_newest: dict[str, int] = {}  # agent -> its newest line's second

    def add(self, line: dict) -> None:
        ts = int(line["ts"])
        phase = str(line.get("phase") or "")
        agent = str(line.get("agent", "?"))
        self.agent_cpu[agent] = float(line.get("cpu_pct", 0.0))
        self.agent_newest[agent] = max(ts, self.agent_newest.get(agent, ts))
        total = self.seconds[ts]
        ops_of_line = line.get("ops") or {}
        if ops_of_line:
            self.spans[phase].add(ts, line_span(line))
        # every op's histogram of the line decoded at once, added bucket by bucket
        sparse = sparse_counts(
            [s.get(self.kind) or s.get("service_hist") for s in ops_of_line.values()])
        for (op, sample), (index, count) in zip(ops_of_line.items(), sparse, strict=True):
            cell = self.cells[(phase, ts, str(op))]
            for counts in (total, cell, self.totals[(phase, str(op))]):
                counts.count(sample)
            add_counts(total.hist, index, count)
            add_counts(cell.hist, index, count)

    def window(
        self,
        t0: float,
        t1: float,
        op: str | None = None,
        phase: str | None = None,
        steps: bool = False,
    ) -> WindowSummary:
        """Merged stats over completion seconds in [t0, t1) (of one phase label's ops
        when `phase` is given; with `steps`, its ramp steps' labels ``PHASE@...`` too)."""
        if phase is None and op is None:
            items = [s for ts, s in self.seconds.items() if t0 <= ts < t1]
        else:
            step_prefix = f"{phase}@" if steps else None
            items = [
                s
                for (p, ts, o), s in self.cells.items()
                if t0 <= ts < t1
                and (phase is None or p == phase or (step_prefix and p.startswith(step_prefix)))
                and (op is None or o == op)
            ]
        return _summary(items, max(1, int(t1 - t0)) if items else 0)

    def duration(self, phase: str, clock: tuple[float, float] | None = None) -> float | None:
        """The phase's measured duration (phase_rate.measured_duration): its lines' span,
        else `clock` (the phase's own start and end), else its completion seconds."""
        span = self.spans.get(phase, PhaseSpan())
        return phase_rate.measured_duration(
            span.first_start, span.last_done, clock, (span.first_ts, span.last_ts)
        )

    def phase(
        self, label: str, op: str | None = None, clock: tuple[float, float] | None = None
    ) -> WindowSummary:
        """Every op (or one op) of the phase `label`, over its measured duration: the
        figures its result, its event and the store's phase_summary give."""
        items = [
            s for (p, _ts, o), s in self.cells.items() if p == label and (op is None or o == op)
        ]
        span = self.spans.get(label, PhaseSpan())
        first, last = span.first_ts, span.last_ts
        seconds = (last - first + 1) if first is not None and last is not None else 0
        return _summary(items, seconds or 0, self.duration(label, clock))

    def span(self, label: str) -> PhaseSpan:
        return self.spans.get(label, PhaseSpan())

    def latest(self, now: float, span: int = 1, phase: str | None = None) -> WindowSummary:
        """The last complete `span` seconds before `now` (of the ops of `phase` and its
        ramp steps, when given: not a previous phase's late completions)."""
        end = int(now)
        return self.window(end - span, end, phase=phase, steps=phase is not None)

    def ops_in(self, op: str, t0: float, t1: float) -> int:
        return sum(s.ops for (_p, ts, o), s in self.cells.items() if o == op and t0 <= ts < t1)

    def last_complete_second(self, now: float, settle_s: float = SETTLE_S) -> int | None:
        """The newest completion second whose lines are all in: every agent has sent a
        line of a later second, or `settle_s` has passed since the second's end (an
        agent whose load ended sends no later line). None before any line."""
        if not self.agent_newest:
            return None
        newest = max(self.agent_newest.values())
        by_agents = min(self.agent_newest.values()) - 1
        by_clock = int(now - settle_s) - 1
        return min(newest, max(by_agents, by_clock))

    def second_cells(self, ts: int) -> dict[tuple[str, str], WindowSummary]:
        """Completion second `ts` per (phase label, op) that has a line in it: every
        agent's histograms merged (the store's op_seconds row of that second)."""
        found = {}
        for phase, op in self.totals:
            cell = self.cells.get((phase, ts, op))
            if cell is not None:
                found[(phase, op)] = _summary([cell], 1)
        return found
