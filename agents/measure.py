"""Per-second, per-op measurement: counts, error classes, late ops, HDR histograms.

Values are microseconds in ``HdrHistogram(1, 60_000_000, 3)`` (the agent protocol).
Service time runs from the actual send, response time from the intended start.
"""

from __future__ import annotations

import resource
import time
from typing import Any

from hdrh.histogram import HdrHistogram

LOWEST, HIGHEST, DIGITS = 1, 60_000_000, 3


def new_hist() -> HdrHistogram:
    return HdrHistogram(LOWEST, HIGHEST, DIGITS)


def clamp_us(seconds: float) -> int:
    us = int(seconds * 1_000_000)
    return 1 if us < 1 else (HIGHEST if us > HIGHEST else us)


class OpStats:
    __slots__ = ("ops", "errors", "late", "service", "response")

    def __init__(self) -> None:
        self.ops = 0
        self.errors: dict[str, int] = {}
        self.late = 0
        self.service = new_hist()
        self.response = new_hist()


class IntervalRecorder:
    """Collects one second at a time; ``cut()`` returns the finished second's line."""

    def __init__(self, agent: str, host: str) -> None:
        self.agent, self.host = agent, host
        self.phase = ""
        self.current: dict[str, OpStats] = {}
        self._cpu = self._cpu_s()
        self._wall = time.monotonic()

    @staticmethod
    def _cpu_s() -> float:
        r = resource.getrusage(resource.RUSAGE_SELF)
        return r.ru_utime + r.ru_stime

    def _stats(self, op: str) -> OpStats:
        stats = self.current.get(op)
        if stats is None:
            stats = self.current[op] = OpStats()
        return stats

    def ok(self, op: str, intended: float, sent: float, done: float, late: bool) -> None:
        stats = self.current.get(op) or self._stats(op)
        stats.ops += 1
        stats.service.record_value(clamp_us(done - sent))
        stats.response.record_value(clamp_us(done - intended))
        if late:
            stats.late += 1

    def error(self, op: str, exc: BaseException, late: bool) -> None:
        stats = self.current.get(op) or self._stats(op)
        stats.ops += 1
        name = type(exc).__name__
        stats.errors[name] = stats.errors.get(name, 0) + 1
        if late:
            stats.late += 1

    def cut(self, ts: int) -> dict[str, Any]:
        """The interval line for second ``ts`` (what completed since the last cut)."""
        finished, self.current = self.current, {}
        cpu, wall = self._cpu_s(), time.monotonic()
        cpu_pct = 100.0 * (cpu - self._cpu) / max(wall - self._wall, 1e-6)
        self._cpu, self._wall = cpu, wall
        ops = {
            op: {
                "ops": s.ops,
                "errors": s.errors,
                "late": s.late,
                "service_hist": s.service.encode().decode(),
                "response_hist": s.response.encode().decode(),
            }
            for op, s in finished.items()
        }
        return {
            "type": "interval",
            "agent": self.agent,
            "host": self.host,
            "ts": ts,
            "phase": self.phase,
            "cpu_pct": round(cpu_pct, 1),
            "ops": ops,
        }


def decode(encoded: str) -> HdrHistogram:
    return HdrHistogram.decode(encoded)
