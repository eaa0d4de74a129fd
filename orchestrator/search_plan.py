"""Where a `search` phase steps next: bracket, bisect, confirm (no I/O, no clock).

The search looks for the highest rate whose step passes the target, the way
NoSQLBench's ``findmax`` and the stress tools' automatic rate (``-rate auto``) do:

1. bracket: from the start rate, steps grow by ``growth`` (x2 by default) until one
   fails (or the max rate passes: the answer is then the max, "not bounded"); when the
   first step already fails, steps shrink by ``growth`` until one passes (or the min
   rate fails: no answer).
2. narrow: bisection of [highest pass, lowest fail] until its width is within the
   resolution (ops/s, or % of the passing rate).
3. confirm: one more step at the answer. When it fails, the answer was luck: that rate
   becomes the bracket's failing end and the search narrows again below it (at most
   ``max_confirmations`` confirmation steps; the answer is then unconfirmed).

``max_steps`` bounds the whole search; a search cut by it answers its bracket so far,
unconfirmed. The caller runs each rate ``next_rate`` asks for and tells ``record``
whether its step passed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

BRACKET, NARROW, CONFIRM = "bracket", "narrow", "confirm"


@dataclass(frozen=True)
class SearchBounds:
    min_rate: float
    max_rate: float
    start_rate: float
    growth: float = 2.0
    resolution: float | None = None  # ops/s
    resolution_pct: float | None = None  # % of the passing rate (used when no resolution)
    max_steps: int = 20
    confirm: bool = True
    max_confirmations: int = 2

    def close_enough(self, low: float, high: float) -> bool:
        """Whether the bracket [low, high] is within the resolution."""
        if self.resolution is not None:
            return high - low <= self.resolution + 1e-9
        pct = self.resolution_pct if self.resolution_pct is not None else 10.0
        return high - low <= low * pct / 100.0 + 1e-9

    def resolution_text(self) -> str:
        if self.resolution is not None:
            return f"{self.resolution:g} ops/s"
        return f"{self.resolution_pct if self.resolution_pct is not None else 10.0:g}%"


def _between(low: float, high: float) -> float:
    """A rate inside (low, high), rounded when rounding keeps it inside."""
    mid = (low + high) / 2.0
    for digits in (0, 1, 2):
        rounded = round(mid, digits) if digits else float(round(mid))
        if low < rounded < high:
            return rounded
    return mid


@dataclass
class RateSearch:
    bounds: SearchBounds
    stage: str = BRACKET
    low: float | None = None  # highest rate that passed (below `high`)
    high: float | None = None  # lowest rate that failed
    found: float | None = None
    confirmed: bool = False
    done: bool = False
    stop_reason: str = ""
    steps: list[tuple[float, str, bool]] = field(default_factory=list)  # rate, stage, passed
    confirmations: int = 0
    _next: float | None = None

    def __post_init__(self) -> None:
        b = self.bounds
        self._next = min(max(b.start_rate, b.min_rate), b.max_rate)

    def next_rate(self) -> tuple[float, str] | None:
        """(rate, stage) of the next step, or None when the search is over."""
        if self.done:
            return None
        if len(self.steps) >= self.bounds.max_steps:
            self._finish(f"step budget ({self.bounds.max_steps} steps) spent")
            return None
        assert self._next is not None
        return self._next, self.stage

    def record(self, rate: float, passed: bool) -> None:
        """What the step at `rate` (the one next_rate asked for) gave."""
        stage = self.stage
        self.steps.append((rate, stage, passed))
        b = self.bounds
        if stage == CONFIRM:
            self.confirmations += 1
            if passed:
                self.confirmed = True
                self._finish("confirmed")
                return
            # the answer was luck: narrow again below it
            self.high = rate
            below = [r for r, _s, ok in self.steps if ok and r < rate]
            self.low = max(below) if below else None
            if self.confirmations >= b.max_confirmations:
                self._finish(f"{self.confirmations} confirmation steps failed")
                return
            if self.low is None:
                self.stage = BRACKET
                if rate <= b.min_rate:
                    self._finish(f"the min rate {b.min_rate:g} ops/s failed")
                    return
                self._next = max(rate / b.growth, b.min_rate)
                return
            self._narrow()
            return
        if passed:
            self.low = rate if self.low is None else max(self.low, rate)
        else:
            self.high = rate if self.high is None else min(self.high, rate)
        if self.low is not None and self.high is not None:
            self._narrow()
            return
        # still bracketing in one direction
        if passed:
            if rate >= b.max_rate:
                self._finish(f"the max rate {b.max_rate:g} ops/s passed (not bounded)")
                return
            self._next = min(rate * b.growth, b.max_rate)
        else:
            if rate <= b.min_rate:
                self._finish(f"the min rate {b.min_rate:g} ops/s failed")
                return
            self._next = max(rate / b.growth, b.min_rate)

    def _narrow(self) -> None:
        assert self.low is not None and self.high is not None
        if self.bounds.close_enough(self.low, self.high):
            if self.bounds.confirm:
                self.stage = CONFIRM
                self._next = self.low
            else:
                self._finish("within the resolution")
            return
        self.stage = NARROW
        self._next = _between(self.low, self.high)

    def _finish(self, reason: str) -> None:
        self.done = True
        self.stop_reason = reason
        self.found = self.low
        self._next = None

    @property
    def bracket(self) -> list[float | None]:
        return [self.low, self.high]


def bounds_of(phase: Any) -> SearchBounds:
    """The bounds of a `search` phase (models.SearchPhase)."""
    return SearchBounds(
        min_rate=phase.min_rate,
        max_rate=phase.max_rate,
        start_rate=phase.start_rate if phase.start_rate is not None else phase.min_rate,
        growth=phase.growth,
        resolution=phase.resolution,
        resolution_pct=phase.resolution_pct,
        max_steps=phase.max_steps,
        confirm=phase.confirm,
        max_confirmations=phase.max_confirmations,
    )


def expected_steps(phase: Any) -> int:
    """The steps a search takes when its answer lies halfway (on a log scale) between
    its start and max rates: the plan's estimate of its length."""
    bounds = bounds_of(phase)
    knee = math.sqrt(bounds.start_rate * bounds.max_rate)
    search = RateSearch(bounds)
    while (asked := search.next_rate()) is not None:
        search.record(asked[0], asked[0] <= knee)
    return len(search.steps)
