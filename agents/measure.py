"""Per-second, per-op measurement: counts, error classes, late ops, HDR histograms.

Values are microseconds in ``HdrHistogram(1, 60_000_000, 3)`` (the agent protocol).
Service time runs from the actual send, response time from the intended start.
Histograms go out as base64 of HdrHistogram's uncompressed V2 encoding (header and
ZigZag varint counts, as Java's `encodeIntoByteBuffer` writes it): the link may
compress, and the store merges hundreds a second without inflating each one.
"""

from __future__ import annotations

import base64
import ctypes
import resource
import time
from typing import Any

import pyhdrh
from hdrh.histogram import HdrHistogram

from loadtower.store.hdr_format import DIGITS, HIGHEST, LOWEST, PAYLOAD_HEADER, pack_header


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

    def mark(self) -> None:
        """Start the next line's CPU share here (a phase starts): the set-up before it,
        spread over an unknown number of seconds, is not any one second's CPU."""
        self._cpu, self._wall = self._cpu_s(), time.monotonic()

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

    def add_counts(self, op: str, sample: dict[str, Any]) -> None:
        """Merge a second the native sender measured (its HDR counts in hdrh's layout)."""
        import numpy as np

        stats = self.current.get(op) or self._stats(op)
        stats.ops += sample["ops"]
        stats.late += sample["late"]
        for name, count in sample["errors"].items():
            stats.errors[name] = stats.errors.get(name, 0) + count
        for hist, counts in ((stats.service, sample["service"]), (stats.response, sample["response"])):
            view = np.ctypeslib.as_array(hist.counts)  # hdrh's own counts array
            view += counts.view(view.dtype)  # hdrh keeps uint64, the sender int64
            nonzero = np.flatnonzero(view)
            if nonzero.size:
                hist.set_internal_tacking_values(int(nonzero[0]), int(nonzero[-1]), int(view.sum()))

    def cut(self, ts: int) -> dict[str, Any]:
        """The interval line for second ``ts`` (what completed since the last cut)."""
        finished, self.current = self.current, {}
        cpu, wall = self._cpu_s(), time.monotonic()
        used = cpu - self._cpu
        cpu_pct = 100.0 * used / max(wall - self._wall, 1e-6)
        self._cpu, self._wall = cpu, wall
        ops = {
            op: {
                "ops": s.ops,
                "errors": s.errors,
                "late": s.late,
                "service_hist": encode(s.service),
                "response_hist": encode(s.response),
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
            "cpu_s": round(used, 4),
            "ops": ops,
        }


def encode(hist: HdrHistogram) -> str:
    """`hist` as base64 of the uncompressed V2 encoding."""
    limit = hist.get_counts_array_index(hist.max_value) + 1 if hist.total_count else 0
    head = PAYLOAD_HEADER.size
    buf = ctypes.create_string_buffer(head + limit * (hist.word_size + 1))
    size = 0
    if limit:
        room = limit * (hist.word_size + 1)
        addr = ctypes.addressof(buf) + head
        size = pyhdrh.encode(ctypes.addressof(hist.counts), limit, hist.word_size, addr, room)
    pack_header(buf, size)
    return base64.b64encode(buf.raw[: head + size]).decode()


def decode(encoded: str) -> HdrHistogram:
    """A histogram from either the agents' encoding or hdrh's compressed one."""
    import numpy as np

    from loadtower.store import hdr

    hist = new_hist()
    _no, index, count = hdr.decode_many([encoded])
    np.ctypeslib.as_array(hist.counts)[index] = count  # a view of hdrh's counts array
    hist.set_internal_tacking_values(
        int(index[0]) if index.size else -1, int(index[-1]) if index.size else -1, int(count.sum())
    )
    return hist
