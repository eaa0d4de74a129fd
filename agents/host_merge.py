"""One interval line per agent host and second: the lead worker of a host merges its own
and the other workers' lines of a second before sending (issue 28: the bytes through the
SSH forwards, the master and the orchestrator divided by the workers per host).

- :func:`merge_lines`: the host's line of several workers' lines of one (phase, second):
  ops, error classes and late starts summed, histograms added, the busiest worker's
  ``cpu_pct``, the CPU seconds summed, the widest span. It names every worker line it
  holds in ``covers`` ((agent, seq) pairs: the orchestrator marks them all stored, so a
  spool's backfill never counts a worker's second twice) and its worker count in
  ``workers``.
- :class:`HostMerger`: the lead's buffer. A second goes out once every worker taking part
  has sent that second or a later one, or `bound_s` after its first part came in (a
  worker that stalls or dies delays its host's second by at most that); a part that comes
  after its second went out is a line of its own for the same second (the store and the
  live view add several lines into one second). A second of one part goes out in the
  host's form too (its histograms as they came): a host's lines always carry one agent
  name, `HOST/*`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from loadtower.protocol.hdr_encoding import decode, encode
from loadtower.protocol.lines import IntervalLine, OpSample

HIST_FIELDS = ("service_hist", "response_hist", "lateness_hist")
DEFAULT_BOUND_S = 1.0


def merged_agent(host: str) -> str:
    """The agent name of a host's merged lines (the store's `agent` for them)."""
    return f"{host}/*"


def _merge_op(samples: Sequence[OpSample]) -> OpSample:
    errors: dict[str, int] = {}
    for s in samples:
        for name, count in s["errors"].items():
            errors[name] = errors.get(name, 0) + int(count)
    out: OpSample = {"ops": sum(int(s["ops"]) for s in samples), "errors": errors,
                     "late": sum(int(s["late"]) for s in samples),
                     "service_hist": "", "response_hist": ""}
    for name in HIST_FIELDS:
        texts = [str(s[name]) for s in samples if s.get(name)]  # type: ignore[literal-required]
        if not texts:
            continue
        if len(texts) == 1:
            out[name] = texts[0]  # type: ignore[literal-required]
            continue
        total = decode(texts[0])
        for text in texts[1:]:
            total.add(decode(text))
        out[name] = encode(total)  # type: ignore[literal-required]
    tops = [int(s["lateness_max_us"]) for s in samples if "lateness_max_us" in s]
    if "lateness_hist" in out and tops:
        out["lateness_max_us"] = max(tops)
    return out


def merge_lines(host: str, lines: Sequence[IntervalLine]) -> IntervalLine:
    """The host's line of `lines` (lines of one phase and second)."""
    by_op: dict[str, list[OpSample]] = {}
    for line in lines:
        for op, sample in line["ops"].items():
            by_op.setdefault(op, []).append(sample)
    spans = [line["span"] for line in lines if line.get("span")]
    merged: dict[str, Any] = {
        "type": "interval",
        "agent": merged_agent(host),
        "host": host,
        "ts": lines[0]["ts"],
        "phase": lines[0]["phase"],
        "cpu_pct": max(float(line.get("cpu_pct") or 0.0) for line in lines),
        "cpu_s": round(sum(float(line.get("cpu_s") or 0.0) for line in lines), 4),
        "span": ([min(s[0] for s in spans if s), max(s[1] for s in spans if s)]
                 if spans else None),
        "ops": {op: _merge_op(samples) for op, samples in sorted(by_op.items())},
        "covers": [[line["agent"], line["seq"]] for line in lines if "seq" in line],
        "workers": len(lines),
    }
    return merged  # type: ignore[return-value]


@dataclass
class Part:
    """One worker's line waiting in the merger, with the token its sender gave it."""

    worker: str
    line: IntervalLine
    token: Any


@dataclass
class Out:
    """A line to send and the tokens of the parts it holds (sent: they may be acked)."""

    line: IntervalLine
    tokens: list[Any] = field(default_factory=list)


@dataclass
class _Second:
    first: float  # when its first part came in (the merger's clock)
    parts: list[Part] = field(default_factory=list)


class HostMerger:
    """The lead worker's buffer of its host's seconds (see the module's docstring)."""

    def __init__(self, host: str, bound_s: float = DEFAULT_BOUND_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.host, self.bound_s, self.clock = host, bound_s, clock
        self.workers: set[str] = set()  # the workers taking part (connected, alive)
        self.seconds: dict[tuple[str, int], _Second] = {}
        self.newest: dict[tuple[str, str], int] = {}  # (worker, phase) -> its latest second
        self.sent: set[tuple[str, int]] = set()  # seconds that went out (late parts: alone)

    def join(self, worker: str) -> None:
        self.workers.add(worker)

    def leave(self, worker: str) -> list[Out]:
        """`worker` is gone: the seconds that waited for it may go now."""
        self.workers.discard(worker)
        for key in [k for k in self.newest if k[0] == worker]:
            del self.newest[key]
        return self.due()

    def add(self, worker: str, line: IntervalLine, token: Any = None) -> list[Out]:
        """A worker's line; returns what may go out now."""
        self.workers.add(worker)
        key = (str(line["phase"]), int(line["ts"]))
        newest = self.newest.get((worker, key[0]))
        if newest is None or key[1] > newest:
            self.newest[(worker, key[0])] = key[1]
        if key in self.sent:  # its second went out already: this part goes alone
            return [Out(merge_lines(self.host, [line]), [token]), *self.due()]
        second = self.seconds.get(key)
        if second is None:
            second = self.seconds[key] = _Second(self.clock())
        second.parts.append(Part(worker, line, token))
        return self.due()

    def due(self) -> list[Out]:
        """The seconds every taking-part worker has passed, and those older than the bound."""
        now = self.clock()
        return self._send([key for key, second in self.seconds.items()
                           if now - second.first >= self.bound_s or self._complete(key)])

    def flush_worker(self, worker: str) -> list[Out]:
        """Now, every second that holds a part of `worker` (its next line is not an
        interval line: the merged ones must go before it)."""
        return self._send([k for k, s in self.seconds.items()
                           if any(p.worker == worker for p in s.parts)])

    def flush_all(self) -> list[Out]:
        return self._send(list(self.seconds))

    def pending(self) -> int:
        return sum(len(s.parts) for s in self.seconds.values())

    def _complete(self, key: tuple[str, int]) -> bool:
        phase, ts = key
        return all(self.newest.get((w, phase), -1) >= ts for w in self.workers)

    def _send(self, keys: list[tuple[str, int]]) -> list[Out]:
        """These seconds' lines, oldest first (removed; their keys kept as sent)."""
        out = []
        for key in sorted(keys, key=lambda k: (k[1], k[0])):
            second = self.seconds.pop(key)
            self.sent.add(key)
            out.append(Out(merge_lines(self.host, [p.line for p in second.parts]),
                           [p.token for p in second.parts]))
        if len(self.sent) > 4096:  # bounded: a part this late is long past its bound
            self.sent = set(sorted(self.sent, key=lambda k: k[1])[-2048:])
        return out
