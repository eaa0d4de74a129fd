"""Turning agent interval lines into stored rows: per-agent op rows and merged rollups.

A batch of interval lines becomes (1) one row per agent, second and op with that
agent's own percentiles and (2) updates of three rollup levels keyed by op and phase:
per second (merged across agents), per minute and per phase. Each level keeps the
dense HDR counts of its keys as rows of one matrix (service, response and the open
model's lateness), so percentiles of a merged key are exact and the compiled loops
(hdr_kernels.py) can add and encode them without a Python step per histogram; dirty
keys are re-written on the next flush. A key that got no lateness histogram (closed
model, older agents) stores NULL lateness columns.
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

_POOL = ThreadPoolExecutor(2, thread_name_prefix="store-ingest")
AGENTS_PREFIX = hdr.AGENTS_B64_PREFIX  # base64 of the uncompressed V2 cookie: what agents send
KEEP_SECONDS = 5  # a second's counts stay in memory this long after newer data arrives
KEEP_MINUTES = 2
EMPTY_LO, EMPTY_HI = hdr.COUNTS_LEN, -1  # the [lo, hi] of a row with no counts
SERVICE, RESPONSE, LATENESS = 0, 1, 2  # the kinds: counts[row, kind]
KINDS = 3
LATENESS_PCTS = np.array([50.0, 99.0])  # stored as lateness_p50_ms, lateness_p99_ms


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
    # a lateness histogram came (the open model's send - intended start: lines'
    # ``lateness_hist``, or a stored row's); its counts are the row's LATENESS kind.
    # False: none came, the lateness columns stay NULL (even when it was empty)
    lateness: bool = False


Key = tuple[Any, ...]  # (run_id, ts|minute|None, phase, op)


def _zeros(*shape: int) -> npt.NDArray[np.int64]:
    return np.zeros(shape, np.int64)


JOIN_ITEMS = 1024  # items whose histogram texts are joined and read at a time (ingest)


def ascii_piece(texts: list[str]) -> npt.NDArray[np.uint8]:
    """The texts one after the other, as ASCII bytes (UnicodeEncodeError otherwise)."""
    return np.frombuffer("".join(texts).encode("ascii"), np.uint8)


@dataclass
class Level:
    name: str  # table
    accs: dict[Key, Acc] = field(default_factory=dict)
    dirty: set[Key] = field(default_factory=set)
    late_keys: set[Key] = field(default_factory=set)  # evicted earlier; merge with the file
    evicted_before: dict[str, int] = field(default_factory=dict)  # run -> watermark
    # counts[row, kind] (SERVICE, RESPONSE, LATENESS); lo/hi bound a row's non-empty part.
    # np.zeros is calloc: the pages of a kind no line filled (lateness in the closed
    # model) are never touched and cost no memory
    counts: npt.NDArray[np.int64] = field(default_factory=lambda: _zeros(0, KINDS, hdr.COUNTS_LEN))
    lo: npt.NDArray[np.int64] = field(default_factory=lambda: _zeros(0, KINDS))
    hi: npt.NDArray[np.int64] = field(default_factory=lambda: _zeros(0, KINDS))
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
            counts = np.zeros((cap, KINDS, hdr.COUNTS_LEN), np.int64)
            for r, k in zip(*np.nonzero(self.hi >= self.lo), strict=True):  # copy what is held
                lo, hi = self.lo[r, k], self.hi[r, k] + 1
                counts[r, k, lo:hi] = self.counts[r, k, lo:hi]
            self.counts = counts
            self.lo = np.concatenate([self.lo, np.full((cap - old, KINDS), EMPTY_LO, np.int64)])
            self.hi = np.concatenate([self.hi, np.full((cap - old, KINDS), EMPTY_HI, np.int64)])
            self.free = list(range(cap - 1, old - 1, -1))
        return self.free.pop()

    def add_dense(self, acc: Acc, kind: int, counts: np.ndarray) -> None:
        """Dense counts (COUNTS_LEN) into a key's row; lateness marks the key as having
        some, also when they are empty (a stored row's)."""
        if kind == LATENESS:
            acc.lateness = True
        nz = np.flatnonzero(counts)
        if nz.size:
            self.counts[acc.row, kind] += counts
            self.lo[acc.row, kind] = min(self.lo[acc.row, kind], nz[0])
            self.hi[acc.row, kind] = max(self.hi[acc.row, kind], nz[-1])

    def drop(self, keys: list[Key]) -> None:
        gone = [self.accs.pop(k) for k in keys]
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
        # base64 V2 encodings: service, response and lateness of each item ("": none)
        texts: list[str] = []
        key_span: dict[int, tuple[float, float]] = {}  # key -> its lines' [first_start, last_done]
        late_why: dict[int, str] = {}  # item -> why its lateness histogram was left out
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
                for op, s in (line.get("ops") or {}).items():
                    op = str(op)
                    for name in ("service_hist", "response_hist"):
                        t = s.get(name)
                        # the agents' form goes as is: the compiled loop checks it in full
                        fast = t.__class__ is str and t.startswith(prefix) and t.isascii()
                        texts.append(t if fast else agents_form(t))
                    # lateness (open model only; "": none): the agents' form as is when
                    # padded as binascii wants, so that the loop takes what hdrh took
                    t = s.get("lateness_hist")
                    fast = t.__class__ is str and t.startswith(prefix) and t.isascii()
                    if not t or (fast and len(t) % 4 == 0):
                        texts.append(t or "")
                    else:  # a bad one is left out and said, the rest of its line kept
                        try:
                            texts.append(agents_form(t))
                        except (ValueError, TypeError) as exc:
                            late_why[len(items)] = str(exc)
                            texts.append("")
                    errs = s.get("errors")
                    if errs:
                        errs_of[len(items)] = {str(k): int(v) for k, v in errs.items()}
                    ops, late = int(s.get("ops", 0)), int(s.get("late", 0))
                    items.append((run_id, ts, agent, host, phase, op, ops, late))
                    item_key.append(key_of.setdefault((run_id, ts, phase, op), len(key_of)))
                if span is not None:  # the line is whole: its span goes to its keys
                    for k in set(item_key[mark:]):
                        old = key_span.get(k, span)
                        key_span[k] = (min(old[0], span[0]), max(old[1], span[1]))
            except (ValueError, TypeError, KeyError, AttributeError) as exc:
                del items[mark:], item_key[mark:], texts[KINDS * mark :]
                for i in [i for i in errs_of if i >= mark]:
                    del errs_of[i]
                for i in [i for i in late_why if i >= mark]:
                    del late_why[i]
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
        key_accs: list[list[Acc]] = []  # per level, each key's accumulator
        for col, level in enumerate(levels):
            key_accs.append([])
            for k, (run_id, ts, phase, op) in enumerate(key_of):
                acc = level.get(self._level_key(level, run_id, ts, phase, op))
                key_accs[col].append(acc)
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
        sizes = np.fromiter((len(t) for t in texts), np.int64, len(texts))
        ends = np.cumsum(sizes)
        starts = ends - sizes
        resp_stats = np.empty((len(item_key), len(hdr.PERCENTILES) + 1))
        bad = np.zeros(len(texts), np.bool_)
        mats = [lv.counts for lv in levels] + [x for lv in levels for x in (lv.lo, lv.hi)]
        item_rows = key_rows[item_keys]
        any_late = bool(sizes[LATENESS::KINDS].any())
        # a piece of the items at a time: the text of all of them, joined and then
        # encoded, was held twice over at once (about 40 MB a flush at 1,024 workers)
        for a in range(0, len(item_key), JOIN_ITEMS):
            b = min(a + JOIN_ITEMS, len(item_key))
            h0, h1 = KINDS * a, KINDS * b
            text = ascii_piece(texts[h0:h1])
            base = starts[h0]
            args = (text, starts[h0:h1] - base, ends[h0:h1] - base)
            rest = (item_rows[a:b], *mats, hdr.HIGH_VALUES, resp_stats[a:b], bad[h0:h1])

            def run(kind: int, args: Any = args, rest: Any = rest) -> None:
                # numba's Dispatcher stub does not know the jitted signature
                kern.ingest(*args, kind, *rest)  # type: ignore[call-arg]

            # the kinds' histograms touch disjoint memory: one thread each (nogil)
            others = [_POOL.submit(run, k) for k in ([SERVICE, LATENESS] if any_late else [SERVICE])]
            run(RESPONSE)
            for other in others:
                other.result()
            del text, args, rest
        if any_late or late_why:
            self._lateness(items, item_keys, key_accs, texts, sizes, bad, late_why)
        bad[LATENESS::KINDS] = False  # said above
        for h in np.flatnonzero(bad).tolist():
            run_id, ts, agent, _, _, op = items[h // KINDS][:6]
            kind = ("service", "response")[h % KINDS]
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

    def _lateness(self, items: list[tuple[Any, ...]], item_keys: np.ndarray,
                  key_accs: list[list[Acc]], texts: list[str], sizes: np.ndarray,
                  bad: np.ndarray, late_why: dict[int, str]) -> None:
        """After the compiled loop added the items' lateness histograms: their keys marked
        as having lateness, and the ones left out said (not HDR V2 over the protocol's
        range; the loop flags them, hdr.sparse_counts gives the reason as before)."""
        kind_bad = bad[LATENESS::KINDS]
        got = sizes[LATENESS::KINDS] > 0
        for i in np.flatnonzero(kind_bad).tolist():
            counts = _sparse_or_why(texts[KINDS * i + LATENESS].encode("ascii"))
            if isinstance(counts, str):
                late_why[i] = counts
                continue
            # what binascii takes and the compiled loop does not (a newline in the text)
            kind_bad[i] = False
            dense = np.zeros(hdr.COUNTS_LEN, np.int64)
            dense[counts[0]] = counts[1]
            levels = (self.seconds, self.minutes, self.phases)
            for accs, level in zip(key_accs, levels, strict=True):
                level.add_dense(accs[item_keys[i]], LATENESS, dense)
        for k in np.unique(item_keys[got & ~kind_bad]).tolist():
            for accs in key_accs:
                accs[k].lateness = True
        for i in sorted(late_why):
            run_id, ts, agent = items[i][:3]
            why = f"its lateness histogram was left out: {late_why[i]}"
            self.rejected.append((run_id, f"agent {agent!r}, second {ts}: {why}"))

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
    offsets = np.zeros(KINDS * len(rows) + 1, np.int64)
    stats = np.empty((len(rows), len(hdr.PERCENTILES) + 1))
    late = np.empty((len(rows), LATENESS_PCTS.size))
    kern.encode_rows(level.counts, rows, level.lo, level.hi, hdr.HIGH_VALUES, out, offsets, stats,
                     LATENESS_PCTS, late)  # fmt: skip

    def blob(j: int) -> bytes:
        return hdr.stored(out[offsets[j] : offsets[j + 1]].data)

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
    for kind, name in ((SERVICE, "service_hist"), (RESPONSE, "response_hist")):
        cols[name] = pa.array([blob(KINDS * i + kind) for i in range(len(rows))], pa.binary())
    none = np.array([not a.lateness for a in accs], np.bool_)  # NULL: no lateness came
    for j, name in enumerate(["lateness_p50_ms", "lateness_p99_ms"]):
        cols[name] = pa.array(late[:, j], pa.float64(), mask=none)
    cols["lateness_hist"] = pa.array(
        [blob(KINDS * i + LATENESS) if a.lateness else None for i, a in enumerate(accs)],
        pa.binary())
    return pa.table(cols)


def _sparse_or_why(text: bytes) -> tuple[np.ndarray, np.ndarray] | str:
    """A lateness histogram's base64 text as sparse counts, or why it is not an HDR V2
    histogram over the protocol's range (hdr.sparse_counts' reason)."""
    try:
        return hdr.sparse_counts([text])[0]
    except (ValueError, TypeError) as exc:
        return str(exc)


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
            "service_hist": encode(hist), "response_hist": encode(hist),
            "lateness_hist": encode(hist)}}}  # fmt: skip
    rollups = Rollups()
    rollups.ingest([("r", line)])
    level_rows(rollups.seconds, [("r", 1, "p", "x")])
    hdr.decode_many([encode(hist)])  # the agents' text, in one compiled pass
    target = new_hist()
    hdr.add_encoded(target, [encode(hist)])  # and added into a histogram (the live view)
    hdr.release(target)
    hdr.decode_many([hdr.stored(hdr.payload(encode(hist)))], b64=False)  # a stored BLOB
    for acc in rollups.seconds.accs.values():
        acc.written = True
    rollups.forget_run("r")
