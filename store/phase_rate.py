"""The one rate of a phase: its ops over its measured duration, the same figure everywhere.

A phase's duration is measured by the agents' own clocks: from the earliest intended
start to the latest completion among the phase's interval lines (each line's
``span = [first_start, last_done]``). Lines without a span (agents older than the
span) fall back to the phase's own start/end clock, and failing that to the whole
completion seconds it has rows in (``last_ts - first_ts + 1``).

Every figure of a phase's rate goes through ``ops_per_s``: the live result and its
event (``LiveStats``), the ``phase_summary`` view (``SQL_OPS_PER_S``, the same formula
in SQL), ``StoreReader.phase_summary``, the headless table, ``compare``, the engine
table and the HTML report. It rounds to ``DECIMALS`` half away from zero, in Python
and in SQL alike, so one phase shows one number wherever it appears. Per-op rows of a
phase divide by the phase's duration: their rates add up to the phase's.
"""

from __future__ import annotations

import math
from typing import Any

DECIMALS = 1
MIN_DURATION_S = 1e-3  # a phase whose ops all completed at once still has a rate


def line_span(line: dict[str, Any]) -> tuple[float, float] | None:
    """A line's ``span`` [first_start, last_done] (wall clock), or None without a valid one."""
    span = line.get("span")
    if not isinstance(span, (list, tuple)) or len(span) != 2:
        return None
    try:
        first, last = float(span[0]), float(span[1])
    except (TypeError, ValueError):
        return None
    if not (first == first and last == last) or last < first:  # NaN, or reversed
        return None
    return first, last


def measured_duration(
    first_start: float | None,
    last_done: float | None,
    clock: tuple[float | None, float | None] | None = None,
    seconds: tuple[int | None, int | None] | None = None,
) -> float | None:
    """The phase's duration in seconds: its span, else its clock, else its seconds."""
    if first_start is not None and last_done is not None and last_done >= first_start:
        return max(float(last_done) - float(first_start), MIN_DURATION_S)
    if clock is not None and clock[0] is not None and clock[1] is not None:
        if clock[1] > clock[0]:
            return max(float(clock[1]) - float(clock[0]), MIN_DURATION_S)
    if seconds is not None and seconds[0] is not None and seconds[1] is not None:
        return float(max(int(seconds[1]) - int(seconds[0]) + 1, 1))
    return None


def round_rate(value: float) -> float:
    """Half away from zero at DECIMALS (as SQL_ROUND): not Python's banker's round."""
    scale = 10**DECIMALS
    return float(math.floor(value * scale + 0.5) / scale)


def ops_per_s(ops: int, duration_s: float | None) -> float:
    """The phase's (or one of its ops') rate over the phase's measured duration."""
    if not duration_s or duration_s <= 0:
        return 0.0
    return round_rate(ops / duration_s)


def round_duration(duration_s: float | None) -> float | None:
    return None if duration_s is None else round(duration_s, 3)


# The same in SQL, for the phase_summary view: `span_start`/`span_end` are the phase's
# min(first_start)/max(last_done), `clock_start`/`clock_end` its phases row,
# `p_first_ts`/`p_last_ts` its seconds (schema.py's view names them so).
SQL_DURATION = f"""CASE
    WHEN span_start IS NOT NULL AND span_end IS NOT NULL AND span_end >= span_start
        THEN greatest(span_end - span_start, {MIN_DURATION_S})
    WHEN clock_start IS NOT NULL AND clock_end IS NOT NULL AND clock_end > clock_start
        THEN greatest(clock_end - clock_start, {MIN_DURATION_S})
    ELSE CAST(greatest(p_last_ts - p_first_ts + 1, 1) AS DOUBLE) END"""
SQL_OPS_PER_S = f"floor(ops / ({SQL_DURATION}) * {10**DECIMALS} + 0.5) / {10**DECIMALS}"
