"""Per-second, per-op measurement: counts, error classes, late ops, HDR histograms.

Values are microseconds in ``HdrHistogram(1, 60_000_000, 3)`` (the agent protocol).
Service time runs from the actual send, response time from the intended start, and
lateness (open model only) is the send minus the intended start: the scheduler's own
share of response time (docs/agent-protocol.md, "Sending on time"). An op
counts in the wall-clock second it completed in and in the phase it was scheduled in
(docs/agent-protocol.md, "Interval line" and "The end of a phase: the drain").
Histograms go out as base64 of HdrHistogram's uncompressed V2 encoding (header and
ZigZag varint counts, as Java's `encodeIntoByteBuffer` writes it): the link may
compress, and the store merges hundreds a second without inflating each one. A second
the Rust core measured alone (one harvest of it, nothing else recorded in it) goes out
with the core's own encodings, never decoded here (issue 28: one encoding of a sample
from the core to the store); a second with more in it is decoded and merged.
"""

from __future__ import annotations

import base64
import math
import resource
import time
from typing import Any

from hdrh.histogram import HdrHistogram

from loadtower.protocol.hdr_encoding import decode_v2, encode, new_hist
from loadtower.protocol.hdr_format import HIGHEST
from loadtower.protocol.lines import IntervalLine, OpSample

__all__ = ["Bucket", "CoreSecond", "IntervalRecorder", "OpStats", "clamp_us", "decode_v2", "encode", "new_hist"]
def clamp_us(seconds: float) -> int:
    us = int(seconds * 1_000_000)
    return 1 if us < 1 else (HIGHEST if us > HIGHEST else us)


class CoreSecond:
    """One op's second as the Rust core encoded it (HDR V2 bytes), kept as it came while
    nothing else is recorded in that second; `lateness`: its encoding and top
    (``lateness_max_us``), None when no open-model op was sent in it."""

    __slots__ = ("service", "response", "lateness")

    def __init__(self, service: bytes, response: bytes,
                 lateness: tuple[bytes, int] | None) -> None:
        self.service, self.response, self.lateness = service, response, lateness


class OpStats:
    __slots__ = ("ops", "errors", "late", "_service", "_response", "lateness", "core")

    def __init__(self) -> None:
        self.ops = 0
        self.errors: dict[str, int] = {}
        self.late = 0
        self._service: HdrHistogram | None = None  # made when a value goes in
        self._response: HdrHistogram | None = None
        self.lateness: HdrHistogram | None = None  # open-model ops only (None: none sent)
        self.core: CoreSecond | None = None  # the core's encodings, not decoded yet

    def fresh(self) -> bool:
        """Nothing recorded in it yet."""
        return (self.ops == 0 and self.core is None and self._service is None
                and self.lateness is None)

    def _decoded(self) -> None:
        """The core's encodings, if kept, decoded into the histograms (more goes in)."""
        core, self.core = self.core, None
        if self._service is None or self._response is None:
            self._service, self._response = new_hist(), new_hist()
        if core is not None:
            self._service.add(decode_v2(core.service))
            self._response.add(decode_v2(core.response))
            if core.lateness is not None:
                self.add_lateness_hist(decode_v2(core.lateness[0]))

    def hists(self) -> tuple[HdrHistogram, HdrHistogram]:
        """(service, response) as histograms, the core's encodings decoded into them."""
        if self._service is None or self._response is None or self.core is not None:
            self._decoded()
        assert self._service is not None and self._response is not None
        return self._service, self._response

    @property
    def service(self) -> HdrHistogram:
        return self.hists()[0]

    @property
    def response(self) -> HdrHistogram:
        return self.hists()[1]

    def add_lateness(self, seconds: float) -> None:
        if self.core is not None:
            self._decoded()
        if self.lateness is None:
            self.lateness = new_hist()
        self.lateness.record_value(clamp_us(seconds))

    def add_lateness_hist(self, hist: HdrHistogram) -> None:
        if not hist.get_total_count():
            return
        if self.lateness is None:
            self.lateness = new_hist()
        self.lateness.add(hist)


class Bucket:
    """The ops of one phase that completed in one wall-clock second."""

    __slots__ = ("ops", "first", "last")

    def __init__(self) -> None:
        self.ops: dict[str, OpStats] = {}
        self.first = math.inf  # the earliest intended start (wall clock) of its ops
        self.last = -math.inf  # and the latest completion

    def stats(self, op: str) -> OpStats:
        stats = self.ops.get(op)
        if stats is None:
            stats = self.ops[op] = OpStats()
        return stats

    def span(self, first: float, last: float) -> None:
        if first < self.first:
            self.first = first
        if last > self.last:
            self.last = last


class IntervalRecorder:
    """Per (phase, completion second) buckets; `finished()` turns the seconds that are
    over into interval lines, `flush()` every bucket of a phase that has drained.

    Times come in on the monotonic clock (as the lanes measure them) and are placed on
    the wall clock with one offset taken here, so an op's second is the wall-clock second
    it completed in, whenever the ticker happens to run. The phase is the one the op was
    scheduled in, which the caller passes (captured when the op was scheduled)."""

    def __init__(self, agent: str, host: str) -> None:
        self.agent, self.host = agent, host
        self.phase = ""  # the phase configured now: the one whose CPU the lines carry
        self.offset = time.time() - time.monotonic()  # wall = monotonic + offset
        self.buckets: dict[tuple[str, int], Bucket] = {}
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

    def wall(self, monotonic: float) -> float:
        return monotonic + self.offset

    def _bucket(self, phase: str, second: int) -> Bucket:
        key = (phase, second)
        bucket = self.buckets.get(key)
        if bucket is None:
            bucket = self.buckets[key] = Bucket()
        return bucket

    def ok(self, phase: str, op: str, intended: float, sent: float, done: float,
           late: bool, open_model: bool = False) -> None:
        """One op that succeeded (monotonic times); it counts in its completion second.
        `open_model`: its intended start is the schedule's, and send - intended goes into
        the lateness histogram."""
        first, last = intended + self.offset, done + self.offset
        bucket = self._bucket(phase, int(last))
        bucket.span(first, last)
        stats = bucket.stats(op)
        stats.ops += 1
        stats.service.record_value(clamp_us(done - sent))
        stats.response.record_value(clamp_us(done - intended))
        if open_model:
            stats.add_lateness(sent - intended)
        if late:
            stats.late += 1

    def error(self, phase: str, op: str, name: str, late: bool, intended: float,
              done: float, sent: float | None = None) -> None:
        """One op that failed with error class `name` (monotonic times); `sent`: an
        open-model op that was sent (its lateness is recorded)."""
        first, last = intended + self.offset, done + self.offset
        bucket = self._bucket(phase, int(last))
        bucket.span(first, last)
        stats = bucket.stats(op)
        stats.ops += 1
        stats.errors[name] = stats.errors.get(name, 0) + 1
        if sent is not None:
            stats.add_lateness(sent - intended)
        if late:
            stats.late += 1

    def add_encoded(self, phase: str, second: int, op: str, sample: dict[str, Any]) -> None:
        """Merge a second the Rust core measured: its ``service``/``response`` are raw
        uncompressed V2 encodings (bytes), as its ``lateness`` (a second without open-model
        sends has none; a core before ``lateness_max_us`` sends an empty one);
        ``first``/``last``: wall-clock earliest intended start, latest completion. The
        first sample of an op's second is kept as the core encoded it (the line carries
        those bytes); a second one in it, or any other value, decodes and merges (with
        pyhdrh, the codec hdrh itself uses)."""
        bucket = self._bucket(phase, second)
        bucket.span(sample["first"], sample["last"])
        stats = bucket.stats(op)
        lateness, top = sample.get("lateness"), sample.get("lateness_max_us")
        if stats.fresh() and (not lateness or top is not None):
            stats.core = CoreSecond(sample["service"], sample["response"],
                                    (lateness, int(top)) if lateness and top is not None
                                    else None)
        else:
            stats.service.add(decode_v2(sample["service"]))
            stats.response.add(decode_v2(sample["response"]))
            if lateness:
                stats.add_lateness_hist(decode_v2(lateness))
        stats.ops += sample["ops"]
        stats.late += sample["late"]
        for name, count in sample["errors"].items():
            stats.errors[name] = stats.errors.get(name, 0) + count

    def pending(self, phase: str | None = None) -> bool:
        return any(phase is None or p == phase for p, _s in self.buckets)

    def finished(self, before: int, keep_alive: bool = False) -> list[IntervalLine]:
        """The lines of every second before `before` (wall clock), oldest first. With
        `keep_alive` (lanes running) the configured phase gets a line even without ops,
        so that its CPU and its idle seconds show."""
        keys = sorted((k for k in self.buckets if k[1] < before), key=lambda k: (k[1], k[0]))
        if keep_alive and self.phase and not any(p == self.phase for p, _s in keys):
            self._bucket(self.phase, before - 1)
            keys.append((self.phase, before - 1))
        return self._lines(keys)

    def flush(self, phase: str) -> list[IntervalLine]:
        """Every remaining line of `phase` (it has drained: nothing more can come)."""
        keys = sorted((k for k in self.buckets if k[0] == phase), key=lambda k: k[1])
        return self._lines(keys)

    def _lines(self, keys: list[tuple[str, int]]) -> list[IntervalLine]:
        """The lines of these buckets (removed). The CPU used since the last line that took
        some goes on the configured phase's latest line among them: the sum over a
        phase's lines is the process's CPU from its `mark()` to its last line."""
        lines = [self._line(p, s, self.buckets.pop((p, s))) for p, s in keys]
        mine = [line for line in lines if line["phase"] == self.phase]
        if mine:
            cpu, wall = self._cpu_s(), time.monotonic()
            used = cpu - self._cpu
            mine[-1]["cpu_pct"] = round(100.0 * used / max(wall - self._wall, 1e-6), 1)
            mine[-1]["cpu_s"] = round(used, 4)
            self._cpu, self._wall = cpu, wall
        return lines

    def _line(self, phase: str, second: int, bucket: Bucket) -> IntervalLine:
        ops: dict[str, OpSample] = {}
        for op, s in bucket.ops.items():
            core = s.core
            lateness: tuple[str, int] | None = None
            if core is not None:  # the core's second as it encoded it, not decoded here
                service = base64.b64encode(core.service).decode()
                response = base64.b64encode(core.response).decode()
                if core.lateness is not None:
                    lateness = base64.b64encode(core.lateness[0]).decode(), core.lateness[1]
            else:
                service, response = encode(s.service), encode(s.response)
                if s.lateness is not None:  # open-model ops were sent in it
                    lateness = encode(s.lateness), int(s.lateness.get_max_value())
            sample: OpSample = {"ops": s.ops, "errors": s.errors, "late": s.late,
                                "service_hist": service, "response_hist": response}
            if lateness is not None:
                # with its highest bucket's top: the orchestrator's self-saturation check
                # reads this instead of decoding the histogram when it is in bounds
                sample["lateness_hist"], sample["lateness_max_us"] = lateness
            ops[op] = sample
        span = [round(bucket.first, 6), round(bucket.last, 6)] if bucket.ops else None
        return {
            "type": "interval",
            "agent": self.agent,
            "host": self.host,
            "ts": second,
            "phase": phase,
            "cpu_pct": 0.0,
            "cpu_s": 0.0,
            "span": span,
            "ops": ops,
        }
