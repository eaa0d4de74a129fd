"""Merged stats of the running load: per phase label (the figures a phase reports) and
per completion second (the live display, and windows inside a phase).

Histograms from every agent are merged (HDR add), never averaged.

Memory stays flat over a long run: a second's cell (a full HDR histogram, 136 KiB) is
kept as it is for HOT_S seconds behind the newest line, then frozen to its encoded form
(its counts and a compressed histogram, tens to hundreds of bytes, exact: HDR
encoding loses nothing) and thawed again only when a late line or a window reaches it.
A phase's figures come from its own merged histogram per op, which takes each cell as
it freezes, and from the cells not frozen yet: reading them never decodes a second.
A line's histograms are not decoded and added into a cell's histogram one line at a time:
the cell keeps each line's histogram as the agent encoded it (PENDING_MAX of them at most)
and decodes and adds them all up at once when it is read or frozen (one compiled pass over
their text and one add, not a decode call and a scattered add into its 17,408 buckets per
line: most of the live view's cost at a thousand workers).

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

import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np
from hdrh.histogram import HdrHistogram

from loadtower.store import phase_rate
from loadtower.store.hdr import add_counts, add_encoded, add_many_counts, release, sparse_counts
from loadtower.store.phase_rate import line_span

LOWEST, HIGHEST, DIGITS = 1, 60_000_000, 3
# a completion second counts as complete this long after its end, whatever the agents sent
SETTLE_S = 2.0
# seconds behind the newest line whose cells stay whole (the live view, Prometheus)
HOT_S = 30
# seconds behind the newest line kept at all (frozen): a fault's windows, late lines
KEEP_S = 6 * 3600
# lines' buckets a cell keeps before adding them up (a few hundred bytes each)
PENDING_MAX = 128


def new_histogram() -> HdrHistogram:
    return HdrHistogram(LOWEST, HIGHEST, DIGITS)


def add_texts(hist: HdrHistogram, texts: list[str | bytes]) -> None:
    """Lines' histograms added into `hist`, all decoded in one pass; when the batch has a
    bad one, each on its own and the bad ones left out (the store leaves them out too,
    and names them: its figures and these stay the same)."""
    try:
        add_encoded(hist, texts)
        return
    except (ValueError, TypeError):
        pass
    for text in texts:
        try:
            add_encoded(hist, [text])
        except (ValueError, TypeError):
            continue


_EMPTY = new_histogram()  # never added to: a figure's stand-in for "no histogram yet"


@dataclass
class Counts:
    """Ops, errors (by class) and late ops of one line's op sample, or added up."""

    ops: int = 0
    errors: int = 0
    late: int = 0
    errors_by_class: dict[str, int] = field(default_factory=lambda: defaultdict(int))

    def add(self, ops: int, errors: int, late: int, by_class: dict) -> None:
        """Add one op's figures of an interval line (its ops, errors, late ops and its
        errors by class)."""
        self.ops += ops
        self.errors += errors
        self.late += late
        for name, count in by_class.items():
            self.errors_by_class[name] += int(count)


@dataclass
class SecondStats(Counts):
    added: HdrHistogram = field(default_factory=new_histogram)  # read it as `hist`
    # its histogram is in its phase's already (a frozen cell thawed by a late line): what
    # comes now is added to both, and it is not added again when it freezes
    in_phase: bool = False
    # lines' non-empty buckets (index, count) not yet in `added`: `hist` adds them up
    pending: list[tuple[np.ndarray, np.ndarray]] = field(default_factory=list)
    # lines' histograms as they came (the agents' text), not decoded yet: `hist` decodes
    # them all in one pass and adds them up
    texts: list[str | bytes] = field(default_factory=list)

    @property
    def hist(self) -> HdrHistogram:
        """The cell's histogram, every line's buckets in it."""
        self._add_texts()
        if self.pending:
            add_many_counts(self.added, self.pending)
            self.pending.clear()
        return self.added

    def add_text(self, text: str | bytes | None) -> None:
        """One line's histogram of this cell's op as the agent encoded it, decoded with
        the cell's others when it is read (one pass for up to PENDING_MAX of them)."""
        if text:
            self.texts.append(text)
            if len(self.texts) >= PENDING_MAX:
                self._add_texts()

    def _add_texts(self) -> None:
        """The waiting texts decoded and added into `added` (the bad ones left out)."""
        if self.texts:
            add_texts(self.added, self.texts)
            self.texts.clear()

    def add_buckets(self, index: np.ndarray, count: np.ndarray) -> None:
        """One line's buckets of this cell's op (sparse_counts: views into the line's
        decoded arrays, copied so that they alone are kept), added up when read."""
        if index.size:
            self.pending.append((index.copy(), count.copy()))
            if len(self.pending) >= PENDING_MAX:
                add_many_counts(self.added, self.pending)
                self.pending.clear()

    def frozen(self) -> FrozenStats:
        """This cell encoded; its histogram is released (nothing reads it again)."""
        frozen = FrozenStats(self.ops, self.errors, self.late, dict(self.errors_by_class),
                             self.hist.encode() if self.hist.get_total_count() else b"")
        release(self.hist)
        return frozen


@dataclass
class FrozenStats(Counts):
    """A second's cell past HOT_S: its counts and its histogram encoded (compressed)."""

    encoded: bytes = b""

    def thawed(self) -> SecondStats:
        stats = SecondStats(self.ops, self.errors, self.late, in_phase=True)
        stats.errors_by_class.update(self.errors_by_class)
        if self.encoded:
            add_counts(stats.hist, *sparse_counts([self.encoded])[0])
        return stats


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

    summary = WindowSummary(
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
    release(merged)
    return summary


class LiveStats:
    """Merges agent interval lines per phase label, per second and per op."""

    def __init__(self, kind: str = "response_hist", hot_s: int = HOT_S,
                 keep_s: int = KEEP_S) -> None:
        self.kind = kind
        self.hot_s = hot_s
        self.keep_s = max(keep_s, hot_s)
        # (phase label, second, op) -> what completed in that second for that phase's op
        self.cells: dict[tuple[str, int, str], SecondStats] = defaultdict(SecondStats)
        # cells older than `hot_s` behind the newest line, frozen
        self.frozen_cells: dict[tuple[str, int, str], FrozenStats] = {}
        self._cells_at: dict[int, set[tuple[str, int, str]]] = defaultdict(set)
        self._frozen_at: dict[int, set[tuple[str, int, str]]] = defaultdict(set)
        # the oldest second still kept, once older ones were let go (KEEP_S)
        self.kept_from: int | None = None
        self.newest: int | None = None  # the newest second a line had
        self.spans: dict[str, PhaseSpan] = defaultdict(PhaseSpan)
        self.agent_cpu: dict[str, float] = {}
        # (phase label, op) -> every op of the run so far (the store's op_phase counts)
        self.totals: dict[tuple[str, str], Counts] = defaultdict(Counts)
        # (phase label, op) -> the histogram of every op of it so far (its figures)
        self.phase_hists: dict[tuple[str, str], HdrHistogram] = defaultdict(new_histogram)
        self.agent_newest: dict[str, int] = {}  # agent -> its newest line's second

    def add(self, line: dict) -> None:
        ts = int(line["ts"])
        phase = str(line.get("phase") or "")
        agent = str(line.get("agent", "?"))
        self.agent_cpu[agent] = float(line.get("cpu_pct", 0.0))
        self.agent_newest[agent] = max(ts, self.agent_newest.get(agent, ts))
        ops_of_line = line.get("ops") or {}
        if ops_of_line:
            self.spans[phase].add(ts, line_span(line))
        for op, sample in ops_of_line.items():
            cell = self._cell((phase, ts, str(op)))
            by_class = sample.get("errors") or {}
            figures = (int(sample.get("ops", 0)), int(sum(by_class.values())),
                       int(sample.get("late", 0)), by_class)
            cell.add(*figures)
            self.totals[(phase, str(op))].add(*figures)
            text = sample.get(self.kind) or sample.get("service_hist")
            if not cell.in_phase:  # decoded with the cell's other lines when it is read
                cell.add_text(text)
                continue
            # a late line in a thawed cell: into the cell and its phase's histogram now
            try:
                parts = sparse_counts([text] if text else [])
            except (ValueError, TypeError):
                continue  # left out, as the store leaves it out
            for index, count in parts:
                cell.add_buckets(index, count)
                add_counts(self.phase_hists[(phase, str(op))], index, count)
        if self.newest is None or ts > self.newest:
            self.newest = ts
            self._freeze(ts - self.hot_s)
            self._forget(ts - self.keep_s)

    def _cell(self, key: tuple[str, int, str]) -> SecondStats:
        """A cell, whole (thawed when it was frozen; a cell of a second already let go
        starts again: `kept_from` says its window is no longer whole)."""
        frozen = self.frozen_cells.pop(key, None)
        if frozen is not None:
            self.cells[key] = frozen.thawed()
        self._cells_at[key[1]].add(key)
        return self.cells[key]

    def _freeze(self, below: int) -> None:
        """Freeze the cells older than `below` (a late line's thawed one again when the
        next new second comes)."""
        for ts in [t for t in self._cells_at if t < below]:
            for key in self._cells_at.pop(ts):
                stats = self.cells.pop(key, None)
                if stats is not None:
                    if not stats.in_phase:  # a phase's histogram takes its cells as they go
                        self.phase_hists[(key[0], key[2])].add(stats.hist)
                    self.frozen_cells[key] = stats.frozen()
                    self._frozen_at[ts].add(key)

    def _forget(self, below: int) -> None:
        """Let go of the frozen cells older than `below`: the live figures
        keep the last `keep_s` seconds (a phase's own figures are whole whatever its
        length: `phase_hists`; the store keeps every second)."""
        gone = [t for t in self._frozen_at if t < below]
        for ts in gone:
            for key in self._frozen_at.pop(ts):
                self.frozen_cells.pop(key, None)
        if gone:
            self.kept_from = below

    def whole_from(self, t0: float) -> bool:
        """Whether the seconds from `t0` on are all still kept (`window` over them is
        whole)."""
        return self.kept_from is None or t0 >= self.kept_from

    def _seconds_in(self, t0: float, t1: float) -> Iterable[int]:
        """The completion seconds ts with t0 <= ts < t1: the range, or the kept seconds in
        it when there are fewer of those."""
        lo, hi = math.ceil(t0), math.ceil(t1)
        if hi - lo <= len(self._cells_at) + len(self._frozen_at) + 1:
            return range(lo, hi)
        return [ts for ts in {*self._cells_at, *self._frozen_at} if lo <= ts < hi]

    def _cells_in(
        self, t0: float, t1: float
    ) -> list[tuple[tuple[str, int, str], SecondStats | FrozenStats]]:
        """Every kept cell of the completion seconds in [t0, t1), whole or frozen."""
        found: list[tuple[tuple[str, int, str], SecondStats | FrozenStats]] = []
        for ts in self._seconds_in(t0, t1):
            for key in self._cells_at.get(ts, ()):
                found.append((key, self.cells[key]))
            for key in self._frozen_at.get(ts, ()):
                frozen = self.frozen_cells.get(key)
                if frozen is not None:  # else thawed: among the whole ones
                    found.append((key, frozen))
        return found

    def window(
        self,
        t0: float,
        t1: float,
        op: str | None = None,
        phase: str | None = None,
        steps: bool = False,
    ) -> WindowSummary:
        """Merged stats over completion seconds in [t0, t1) (of one phase label's ops
        when `phase` is given; with `steps`, its ramp steps' labels ``PHASE@...`` too).
        Seconds before `kept_from` are no longer kept: see `whole_from`."""
        step_prefix = f"{phase}@" if steps else None
        found = [
            s
            for (p, _ts, o), s in self._cells_in(t0, t1)
            if (phase is None or p == phase or (step_prefix and p.startswith(step_prefix)))
            and (op is None or o == op)
        ]
        thawed = [s.thawed() for s in found if isinstance(s, FrozenStats)]
        items = [s for s in found if isinstance(s, SecondStats)] + thawed
        summary = _summary(items, max(1, int(t1 - t0)) if items else 0)
        for stats in thawed:
            release(stats.hist)
        return summary

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
        figures its result, its event and the store's phase_summary give (from the
        phase's own merged histograms, which take each cell as it freezes, and the cells
        not frozen yet: the same as merging all its seconds)."""
        items = []
        for (p, o), counts in self.totals.items():
            if p == label and (op is None or o == op):
                # no phase histogram yet: none of its cells froze, they are all below
                hist = self.phase_hists.get((p, o), _EMPTY)
                items.append(SecondStats(counts.ops, counts.errors, counts.late,
                                         dict(counts.errors_by_class), hist))
        for keys in self._cells_at.values():
            for key in keys:
                cell = self.cells[key]
                if key[0] == label and (op is None or key[2] == op) and not cell.in_phase:
                    items.append(SecondStats(0, 0, 0, {}, cell.hist))  # its counts: above
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
        return sum(s.ops for (_p, _ts, o), s in self._cells_in(t0, t1) if o == op)

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
            key = (phase, ts, op)
            cell = self.cells.get(key)
            if cell is not None:
                found[(phase, op)] = _summary([cell], 1)
            elif key in self.frozen_cells:
                thawed = self.frozen_cells[key].thawed()
                found[(phase, op)] = _summary([thawed], 1)
                release(thawed.hist)
        return found
