"""Turning agent interval lines into stored rows: per-agent op rows and merged rollups.

A batch of interval lines becomes (1) one row per agent, second and op with that
agent's own percentiles and (2) updates of three rollup levels keyed by op and phase:
per second (merged across agents), per minute and per phase. Each level keeps the
dense HDR counts of its keys as rows of one matrix (service and response), so
percentiles of a merged key are exact and the compiled loops (hdr_kernels.py) can add
and encode them without a Python step per histogram; dirty keys are re-written on the
next flush.
"""

from __future__ import annotations

import binascii
import json
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt
import pyarrow as pa
from hdrh.histogram import HdrHistogram

from loadtower.protocol.hdr_encoding import decode_v2, encode, new_hist
from loadtower.store import hdr
from loadtower.store import hdr_kernels as kern
from loadtower.store.phase_rate import line_span

_POOL = ThreadPoolExecutor(1, thread_name_prefix="store-ingest")
AGENTS_PREFIX = "HISTEw"  # base64 of the uncompressed V2 cookie: what agents send
KEEP_SECONDS = 5  # a second's counts stay in memory this long after newer data arrives
KEEP_MINUTES = 2
EMPTY_LO, EMPTY_HI = hdr.COUNTS_LEN, -1  # the [lo, hi] of a row with no counts


@dataclass
class Acc:
    row: int  # this key's row in its level's count matrix
    ops: int = 0
    errors: int = 0
    late: int = 0
    classes: Counter[Any] = field(default_factory=Counter[Any])
    first_ts: int = 0
    last_ts: int = 0
    first_start: float | None = None  # the earliest intended start of its lines' ops
    last_done: float | None = None  # the latest completion (lines' ``span``; None: no span)
    written: bool = False  # a row for this key is already in the file
    # the open model's send - intended start (lines' ``lateness_hist``; None: none came),
    # merged in Python: few lines carry it and a key has one
    lateness: HdrHistogram | None = None

    def add_lateness_counts(self, *parts: tuple[np.ndarray, np.ndarray]) -> None:
        """Lateness as sparse counts (hdr.sparse_counts: lines', or a stored row's when a
        late line merges with it), many at once: no histogram per line."""
        if self.lateness is None:
            self.lateness = new_hist()
        hdr.add_many_counts(self.lateness, parts)


Key = tuple[Any, ...]  # (run_id, ts|minute|None, phase, op)


def _zeros(*shape: int) -> npt.NDArray[np.int64]:
    return np.zeros(shape, np.int64)


@dataclass
class Level:
    name: str  # table
    accs: dict[Key, Acc] = field(default_factory=dict)
    dirty: set[Key] = field(default_factory=set)
    late_keys: set[Key] = field(default_factory=set)  # evicted earlier; merge with the file
    evicted_before: dict[str, int] = field(default_factory=dict)  # run -> watermark
    # counts[row, 0] service and counts[row, 1] response; lo/hi bound a row's non-empty part
    counts: npt.NDArray[np.int64] = field(default_factory=lambda: _zeros(0, 2, hdr.COUNTS_LEN))
    lo: npt.NDArray[np.int64] = field(default_factory=lambda: _zeros(0, 2))
    hi: npt.NDArray[np.int64] = field(default_factory=lambda: _zeros(0, 2))
    free: list[int] = field(default_factory=list)

    def get(self, key: Key) -> Acc:
        acc = self.accs.get(key)
        if acc is None:
            start = key[1] if key[1] is not None else 2**62
            acc = self.accs[key] = Acc(self._row(), first_ts=start, last_ts=key[1] or 0)
            if key[1] is not None and key[1] < self.evicted_before.get(key[0], -1):
                self.late_keys.add(key)
        self.dirty.add(key)
        return acc

    def _row(self) -> int:
        if not self.free:
            old = len(self.lo)
            cap = max(16, 2 * old)
            counts = np.zeros((cap, 2, hdr.COUNTS_LEN), np.int64)
            for r, k in zip(*np.nonzero(self.hi >= self.lo), strict=True):  # copy what is held
                lo, hi = self.lo[r, k], self.hi[r, k] + 1
                counts[r, k, lo:hi] = self.counts[r, k, lo:hi]
            self.counts = counts
            self.lo = np.concatenate([self.lo, np.full((cap - old, 2), EMPTY_LO, np.int64)])
            self.hi = np.concatenate([self.hi, np.full((cap - old, 2), EMPTY_HI, np.int64)])
            self.free = list(range(cap - 1, old - 1, -1))
        return self.free.pop()

    def add_dense(self, acc: Acc, kind: int, counts: np.ndarray) -> None:
        nz = np.flatnonzero(counts)
        if nz.size:
            self.counts[acc.row, kind] += counts
            self.lo[acc.row, kind] = min(self.lo[acc.row, kind], nz[0])
            self.hi[acc.row, kind] = max(self.hi[acc.row, kind], nz[-1])

    def drop(self, keys: list[Key]) -> None:
        gone = [self.accs.pop(k) for k in keys]
        for acc in gone:  # freed now, not at the cyclic collector's next full pass
            if acc.lateness is not None:
                hdr.release(acc.lateness)
        rows = np.array([acc.row for acc in gone], np.int64)
        kern.clear_rows(self.counts, rows, self.lo, self.hi, EMPTY_LO, EMPTY_HI)
        self.free.extend(rows.tolist())


AGENT_COLUMNS = ["run_id", "ts", "agent", "host", "phase", "op", "ops", "errors"]
AGENT_COLUMNS += ["errors_by_class", "late", "p50_ms", "p90_ms", "p99_ms", "p999_ms", "max_ms"]


class Rollups:
    def __init__(self) -> None:
        self.seconds = Level("op_second")
        self.minutes = Level("op_minute")
        self.phases = Level("op_phase")
        self.newest: dict[str, int] = {}
        self.rejected: list[tuple[str, str]] = []  # (run, why) of lines left out: for the writer

    def ingest(self, lines: list[tuple[str, dict[str, Any]]]) -> pa.Table | None:
        """Fold a batch of (run_id, interval line) in; return the per-agent op rows."""
        items: list[tuple[Any, ...]] = []  # run, ts, agent, host, phase, op, ops, late
        errs_of: dict[int, dict[str, Any]] = {}  # item -> error classes, for the items that have some
        item_key: list[int] = []
        key_of: dict[Key, int] = {}
        texts: list[str] = []  # base64 V2 encodings: service and response of each item
        key_span: dict[int, tuple[float, float]] = {}  # key -> its lines' [first_start, last_done]
        lateness: list[tuple[int, str, str, int, str]] = []  # key, lateness_hist, run, ts, agent
        a2b, b2a, v2, prefix = binascii.a2b_base64, binascii.b2a_base64, hdr.v2, AGENTS_PREFIX

        def agents_form(text: str | None) -> str:
            """Another form (or none) as the agents' base64 V2 text; theirs is taken as is below."""
            if not text:
                return ""
            return b2a(v2(a2b(text), b64=False), newline=False).decode()

        for run_id, line in lines:
            mark, key_mark = len(items), len(key_of)
            try:
                ts = int(line["ts"])
                agent, host = str(line.get("agent", "")), str(line.get("host", ""))
                phase = str(line.get("phase") or "")
                span = line_span(line)
                line_lateness: list[tuple[int, str, str, int, str]] = []
                for op, s in (line.get("ops") or {}).items():
                    op = str(op)
                    for name in ("service_hist", "response_hist"):
                        t = s.get(name)
                        # the agents' form goes as is: the compiled loop checks it in full
                        fast = t.__class__ is str and t.startswith(prefix) and t.isascii()
                        texts.append(t if fast else agents_form(t))
                    errs = s.get("errors")
                    if errs:
                        errs_of[len(items)] = {str(k): int(v) for k, v in errs.items()}
                    ops, late = int(s.get("ops", 0)), int(s.get("late", 0))
                    items.append((run_id, ts, agent, host, phase, op, ops, late))
                    item_key.append(key_of.setdefault((run_id, ts, phase, op), len(key_of)))
                    if s.get("lateness_hist"):
                        line_lateness.append(
                            (item_key[-1], s["lateness_hist"], run_id, ts, agent))
                if span is not None:  # the line is whole: its span goes to its keys
                    for k in set(item_key[mark:]):
                        old = key_span.get(k, span)
                        key_span[k] = (min(old[0], span[0]), max(old[1], span[1]))
                lateness += line_lateness
            except (ValueError, TypeError, KeyError, AttributeError) as exc:
                del items[mark:], item_key[mark:], texts[2 * mark :]
                for i in [i for i in errs_of if i >= mark]:
                    del errs_of[i]
                for key in list(key_of)[key_mark:]:
                    del key_of[key]
                got = line if isinstance(line, dict) else {}
                where = f"agent {got.get('agent')!r}, second {got.get('ts')}"
                self.rejected.append((run_id, f"interval line left out ({where}): {exc}"))
        if not item_key:
            return None
        cols = [list(c) for c in zip(*items, strict=True)]
        item_keys = np.array(item_key, np.int64)
        n_keys = len(key_of)
        key_ops = np.bincount(item_keys, np.array(cols[6], np.float64), n_keys).astype(np.int64)
        key_late = np.bincount(item_keys, np.array(cols[7], np.float64), n_keys).astype(np.int64)
        key_errs: dict[int, Counter[Any]] = {}
        for i, errs in errs_of.items():
            key_errs.setdefault(item_key[i], Counter()).update(errs)
        levels = (self.seconds, self.minutes, self.phases)
        key_rows = np.empty((n_keys, 3), np.int64)
        for col, level in enumerate(levels):
            for k, (run_id, ts, phase, op) in enumerate(key_of):
                acc = level.get(self._level_key(level, run_id, ts, phase, op))
                key_rows[k, col] = acc.row
                acc.ops += int(key_ops[k])
                acc.late += int(key_late[k])
                classes = key_errs.get(k)
                if classes:
                    acc.errors += sum(classes.values())
                    acc.classes.update(classes)
                acc.first_ts, acc.last_ts = min(acc.first_ts, ts), max(acc.last_ts, ts)
                span = key_span.get(k)
                if span is not None:
                    first, last = acc.first_start, acc.last_done
                    acc.first_start = span[0] if first is None else min(first, span[0])
                    acc.last_done = span[1] if last is None else max(last, span[1])
        self._lateness(lateness, key_of, key_rows, levels)
        sizes = np.fromiter((len(t) for t in texts), np.int64, len(texts))
        ends = np.cumsum(sizes)
        text = np.frombuffer("".join(texts).encode("ascii"), np.uint8)
        resp_stats = np.empty((len(item_key), len(hdr.PERCENTILES) + 1))
        bad = np.zeros(len(texts), np.bool_)
        mats = [lv.counts for lv in levels] + [x for lv in levels for x in (lv.lo, lv.hi)]
        item_rows = key_rows[item_keys]

        def run(kind: int) -> None:
            # numba's Dispatcher stub does not know the jitted signature
            kern.ingest(text, ends - sizes, ends, kind, item_rows, *mats,  # type: ignore[call-arg]
                        hdr.HIGH_VALUES, resp_stats, bad)  # fmt: skip

        # service and response histograms touch disjoint memory: one thread each (nogil)
        other = _POOL.submit(run, 0)
        run(1)
        other.result()
        for h in np.flatnonzero(bad).tolist():
            run_id, ts, agent, _, _, op = items[h // 2][:6]
            kind = ("service", "response")[h % 2]
            why = f"its {kind} histogram is not HDR V2 over 1..60e6 us and was left out"
            self.rejected.append((run_id, f"agent {agent!r}, second {ts}, op {op!r}: {why}"))
        for run_id, ts, _, _ in key_of:
            self.newest[run_id] = max(self.newest.get(run_id, ts), ts)
        errors = [0] * len(item_key)
        classes_json: list[str | None] = [None] * len(item_key)
        for i, errs in errs_of.items():
            errors[i] = int(sum(errs.values()))
            classes_json[i] = json.dumps(errs)
        arrays = [pa.array(c) for c in cols[:6]] + [pa.array(cols[6], pa.int64())]
        arrays.append(pa.array(errors, pa.int64()))
        arrays.append(pa.array(classes_json, pa.string()))
        arrays.append(pa.array(cols[7], pa.int64()))
        arrays += [pa.array(resp_stats[:, j], from_pandas=True) for j in range(resp_stats.shape[1])]
        return pa.table(arrays, names=AGENT_COLUMNS)

    def _lateness(self, lateness: list[tuple[int, str, str, int, str]], key_of: dict[Key, int],
                  key_rows: np.ndarray, levels: tuple[Level, ...]) -> None:
        """Each line's lateness histograms into its keys of every level (a histogram
        that is not HDR V2 over the protocol's range is left out, and said)."""
        keys = list(key_of)
        decoded = _sparse_or_why([text for _k, text, *_rest in lateness])
        # each accumulator's lines gathered, then added at once (many lines share one)
        gathered: dict[int, tuple[Acc, list[tuple[np.ndarray, np.ndarray]]]] = {}
        for (k, _text, run_id, ts, agent), counts in zip(lateness, decoded, strict=True):
            if isinstance(counts, str):
                why = f"its lateness histogram was left out: {counts}"
                self.rejected.append((run_id, f"agent {agent!r}, second {ts}: {why}"))
                continue
            run, second, phase, op = keys[k]
            for level in levels:
                acc = level.accs[self._level_key(level, run, second, phase, op)]
                gathered.setdefault(id(acc), (acc, []))[1].append(counts)
        for acc, parts in gathered.values():
            acc.add_lateness_counts(*parts)

    @staticmethod
    def _level_key(level: Level, run_id: str, ts: int, phase: str, op: str) -> Key:
        if level.name == "op_second":
            return (run_id, ts, phase, op)
        if level.name == "op_minute":
            return (run_id, ts - ts % 60, phase, op)
        return (run_id, None, phase, op)

    def evict(self) -> None:
        """Forget written keys well behind the newest second of their run."""
        for level, keep in ((self.seconds, KEEP_SECONDS), (self.minutes, 60 * KEEP_MINUTES)):
            gone = [
                k
                for k, a in level.accs.items()
                if a.written and k not in level.dirty and k[1] < self.newest.get(k[0], 0) - keep
            ]
            for key in gone:
                old = level.evicted_before.get(key[0], -1)
                level.evicted_before[key[0]] = max(old, key[1] + 1)
            if gone:
                level.drop(gone)

    def forget_run(self, run_id: str) -> None:
        for level in (self.seconds, self.minutes, self.phases):
            gone = [k for k in level.accs if k[0] == run_id and k not in level.dirty]
            if gone:
                level.drop(gone)


def level_rows(level: Level, keys: list[Key]) -> pa.Table:
    """Rows for the given keys of a level, in that level's table layout."""
    accs = [level.accs[k] for k in keys]
    rows = np.array([a.row for a in accs], np.int64)
    width = np.maximum(level.hi[rows] - level.lo[rows] + 2, 0) if rows.size else rows
    out = np.empty(int(10 * width.sum()) + 1, np.uint8)  # <= 10 bytes a bucket
    offsets = np.zeros(2 * len(rows) + 1, np.int64)
    stats = np.empty((len(rows), len(hdr.PERCENTILES) + 1))
    kern.encode_rows(level.counts, rows, level.lo, level.hi, hdr.HIGH_VALUES, out, offsets, stats)
    blobs = [hdr.stored(out[offsets[j] : offsets[j + 1]].data) for j in range(2 * len(rows))]
    cols: dict[str, Any] = {"run_id": [k[0] for k in keys]}
    if level.name == "op_phase":
        cols.update(phase=[k[2] for k in keys], op=[k[3] for k in keys])
        cols.update(first_ts=[a.first_ts for a in accs], last_ts=[a.last_ts for a in accs])
        cols["first_start"] = pa.array([a.first_start for a in accs], pa.float64())
        cols["last_done"] = pa.array([a.last_done for a in accs], pa.float64())
    else:
        cols.update(ts=[k[1] for k in keys], phase=[k[2] for k in keys], op=[k[3] for k in keys])
    cols.update(ops=[a.ops for a in accs], errors=[a.errors for a in accs])
    if level.name == "op_second":
        cols["errors_by_class"] = [json.dumps(dict(a.classes)) if a.classes else None for a in accs]
    cols["late"] = [a.late for a in accs]
    for j, name in enumerate(["p50_ms", "p90_ms", "p99_ms", "p999_ms", "max_ms"]):
        cols[name] = pa.array(stats[:, j], from_pandas=True)
    cols["service_hist"] = pa.array(blobs[0::2], pa.binary())
    cols["response_hist"] = pa.array(blobs[1::2], pa.binary())
    lateness = [a.lateness for a in accs]
    for name, pct in (("lateness_p50_ms", 50.0), ("lateness_p99_ms", 99.0)):
        cols[name] = pa.array([None if h is None else h.get_value_at_percentile(pct) / 1000.0
                               for h in lateness], pa.float64())
    cols["lateness_hist"] = pa.array(
        [None if h is None else hdr.stored(hdr.payload(encode(h))) for h in lateness], pa.binary())
    return pa.table(cols)


def _sparse_or_why(texts: list[Any]) -> list[tuple[np.ndarray, np.ndarray] | str]:
    """Each line's lateness histogram as sparse counts, decoded in one pass; when one of
    them is not an HDR V2 histogram over the protocol's range, each on its own, and that
    one's reason in its place."""
    try:
        return list(hdr.sparse_counts(texts))
    except (ValueError, TypeError):
        pass
    out: list[tuple[np.ndarray, np.ndarray] | str] = []
    for text in texts:
        try:
            out.append(hdr.sparse_counts([text])[0])
        except (ValueError, TypeError) as exc:
            out.append(str(exc))
    return out


def stored_lateness(blob: bytes | None) -> HdrHistogram | None:
    """A stored ``lateness_hist`` BLOB as a histogram (None: none stored)."""
    return None if blob is None else decode_v2(hdr.v2(bytes(blob), b64=False))


def warm() -> None:
    """Compile every loop of hdr_kernels once (numba caches the machine code next to that
    file, or in its user-wide cache), so the first flush of a run does not wait for the
    compiler (loadtower/numba_warm.py runs it)."""
    hist = new_hist()
    hist.record_value(1000)
    sample = {"ops": 1, "errors": {}, "late": 0}
    line = {"agent": "a", "ts": 1, "phase": "p", "ops": {"x": {**sample,
            "service_hist": encode(hist), "response_hist": encode(hist)}}}  # fmt: skip
    rollups = Rollups()
    rollups.ingest([("r", line)])
    level_rows(rollups.seconds, [("r", 1, "p", "x")])
    hdr.decode_many([encode(hist)])
    for acc in rollups.seconds.accs.values():
        acc.written = True
    rollups.forget_run("r")
