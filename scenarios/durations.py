"""Durations written as seconds (30) or with a unit ("500ms", "30s", "2m", "1h").

A duration is finite and at most MAX_DURATION_S (30 days): longer is a typo (or
hostile), and would overflow the timers and deadlines computed from it.
"""

from __future__ import annotations

import math
import re

MAX_DURATION_S = 30 * 86400.0

_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
_PATTERN = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$")


def parse_duration(value: object) -> float:
    """Seconds as a float; raises ValueError with the accepted forms."""
    if isinstance(value, bool):
        raise ValueError('expected a duration such as 30, "500ms", "30s", "2m" or "1h"')
    if isinstance(value, int | float):
        seconds = float(value)
    elif isinstance(value, str) and (match := _PATTERN.match(value)):
        seconds = float(match.group(1)) * _UNITS[match.group(2) or "s"]
    else:
        raise ValueError(
            f'expected a duration such as 30, "500ms", "30s", "2m" or "1h", got {value!r}'
        )
    if not math.isfinite(seconds):
        raise ValueError(f"a duration must be a finite number of seconds, got {value!r}")
    if seconds < 0:
        raise ValueError("a duration cannot be negative")
    if seconds > MAX_DURATION_S:
        raise ValueError(
            f"a duration is at most 30 days ({MAX_DURATION_S:.0f} s), got {format_duration(seconds)}"
        )
    return seconds


def format_duration(seconds: float) -> str:
    if seconds < 1:
        return f"{seconds * 1000:.0f}ms"
    if seconds < 120:
        return f"{seconds:g}s"
    if seconds < 7200:
        return f"{seconds / 60:g}m"
    return f"{seconds / 3600:g}h"
