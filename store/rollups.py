"""Turning agent interval lines into stored rows: per-agent op rows and merged rollups.

A batch of interval lines becomes (1) one row per agent, second and op with that
agent's own percentiles and (2) updates of three rollup levels keyed by op and phase:
per second (merged across agents), per minute and per phase. Each rollup keeps dense
HDR counts, so percentiles of a merged key are exact; dirty keys are re-written on
the next flush.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa

from loadtower.store import hdr

KEEP_SECONDS = 5  # a second's counts stay in memory this long after newer data arrives
KEEP_MINUTES = 2


@dataclass
class Acc:
    ops: int = 0
    errors: int = 0
    late: int = 0
    classes: Counter = field(default_factory=Counter)
    svc: np.ndarray = field(default_factory=lambda: np.zeros(hdr.COUNTS_LEN, np.int64))
    resp: np.ndarray = field(default_factory=lambda: np.zeros(hdr.COUNTS_LEN, np.int64))
    first_ts: int = 0
    last_ts: int = 0
    written: bool = False  # a row for this key is already in the file


Key = tuple  # (run_id, ts|minute|None, phase, op)


@dataclass
class Level:
    name: str  # table
    accs: dict[Key, Acc] = field(default_factory=dict)
    dirty: set[Key] = field(default_factory=set)
    late_keys: set[Key] = field(default_factory=set)  # evicted earlier; merge with the file
    evicted_before: dict[str, int] = field(default_factory=dict)  # run -> watermark

    def get(self, key: Key) -> Acc:
        acc = self.accs.get(key)
        if acc is None:
            start = key[1] if key[1] is not None else 2**62
            acc = self.accs[key] = Acc(first_ts=start, last_ts=key[1] or 0)
            if key[1] is not None and key[1] < self.evicted_before.get(key[0], -1):
                self.late_keys.add(key)
        self.dirty.add(key)
        return acc


AGENT_COLUMNS = ["run_id", "ts", "agent", "host", "phase", "op", "ops", "errors"]
AGENT_COLUMNS += ["errors_by_class", "late", "p50_ms", "p90_ms", "p99_ms", "p999_ms", "max_ms"]


class Rollups:
    def __init__(self) -> None:
        self.seconds = Level("op_second")
        self.minutes = Level("op_minute")
        self.phases = Level("op_phase")
        self.newest: dict[str, int] = {}

    def ingest(self, lines: list[tuple[str, dict[str, Any]]]) -> pa.Table | None:
        """Fold a batch of (run_id, interval line) in; return the per-agent op rows."""
        items: list[tuple] = []
        svc: list[Any] = []
        resp: list[Any] = []
        for run_id, line in lines:
            ts = int(line["ts"])
            agent, host = str(line.get("agent", "")), str(line.get("host", ""))
            phase = str(line.get("phase") or "")
            for op, s in (line.get("ops") or {}).items():
                errs = s.get("errors") or {}
                items.append((run_id, ts, agent, host, phase, str(op), int(s.get("ops", 0)), errs))
                items[-1] += (int(s.get("late", 0)),)
                svc.append(s.get("service_hist"))
                resp.append(s.get("response_hist"))
        if not items:
            return None
        s_no, s_idx, s_cnt = hdr.decode_many(svc)
        r_no, r_idx, r_cnt = hdr.decode_many(resp)
        stats = hdr.sparse_stats(r_no, r_idx, r_cnt, len(items))
        key_of: dict[Key, int] = {}
        item_key = np.empty(len(items), np.int64)
        for i, it in enumerate(items):
            item_key[i] = key_of.setdefault((it[0], it[1], it[4], it[5]), len(key_of))
        keys = list(key_of)
        svc_dense = self._by_key(item_key[s_no], s_idx, s_cnt, len(keys))
        resp_dense = self._by_key(item_key[r_no], r_idx, r_cnt, len(keys))
        for run_id, ts, _, _, phase, op, ops, errs, late in items:
            for acc in self._accs(run_id, ts, phase, op):
                acc.ops += ops
                acc.errors += sum(errs.values())
                acc.late += late
                acc.classes.update(errs)
                acc.first_ts, acc.last_ts = min(acc.first_ts, ts), max(acc.last_ts, ts)
        for k, (run_id, ts, phase, op) in enumerate(keys):
            for acc in self._accs(run_id, ts, phase, op):
                acc.svc += svc_dense(k)
                acc.resp += resp_dense(k)
            self.newest[run_id] = max(self.newest.get(run_id, ts), ts)
        cols = list(zip(*items, strict=True))
        arrays = [pa.array(c) for c in cols[:7]]
        arrays.append(pa.array([sum(e.values()) for e in cols[7]], pa.int64()))
        arrays.append(pa.array([json.dumps(e) if e else None for e in cols[7]], pa.string()))
        arrays.append(pa.array(cols[8], pa.int64()))
        arrays += [pa.array(stats[:, j], from_pandas=True) for j in range(stats.shape[1])]
        return pa.table(arrays, names=AGENT_COLUMNS)

    @staticmethod
    def _by_key(key: np.ndarray, index: np.ndarray, count: np.ndarray, n: int):  # noqa: ANN205
        order = np.argsort(key, kind="stable")
        key, index, count = key[order], index[order], count[order]
        bounds = np.searchsorted(key, np.arange(n + 1))

        def counts(k: int) -> np.ndarray:
            lo, hi = bounds[k], bounds[k + 1]
            return np.bincount(index[lo:hi], count[lo:hi], hdr.COUNTS_LEN).astype(np.int64)

        return counts

    def _accs(self, run_id: str, ts: int, phase: str, op: str) -> tuple[Acc, Acc, Acc]:
        return (
            self.seconds.get((run_id, ts, phase, op)),
            self.minutes.get((run_id, ts - ts % 60, phase, op)),
            self.phases.get((run_id, None, phase, op)),
        )

    def evict(self) -> None:
        """Forget written keys well behind the newest second of their run."""
        for level, keep in ((self.seconds, KEEP_SECONDS), (self.minutes, 60 * KEEP_MINUTES)):
            for key in [k for k, a in level.accs.items() if a.written and k not in level.dirty]:
                if key[1] < self.newest.get(key[0], 0) - keep:
                    del level.accs[key]
                    old = level.evicted_before.get(key[0], -1)
                    level.evicted_before[key[0]] = max(old, key[1] + 1)

    def forget_run(self, run_id: str) -> None:
        for level in (self.seconds, self.minutes, self.phases):
            for key in [k for k in level.accs if k[0] == run_id and k not in level.dirty]:
                del level.accs[key]


def level_rows(level: Level, keys: list[Key]) -> pa.Table:
    """Rows for the given keys of a level, in that level's table layout."""
    accs = [level.accs[k] for k in keys]
    stats = hdr.dense_stats(np.stack([a.resp for a in accs])) if accs else np.zeros((0, 5))
    cols: dict[str, Any] = {"run_id": [k[0] for k in keys]}
    if level.name == "op_phase":
        cols.update(phase=[k[2] for k in keys], op=[k[3] for k in keys])
        cols.update(first_ts=[a.first_ts for a in accs], last_ts=[a.last_ts for a in accs])
    else:
        cols.update(ts=[k[1] for k in keys], phase=[k[2] for k in keys], op=[k[3] for k in keys])
    cols.update(ops=[a.ops for a in accs], errors=[a.errors for a in accs])
    if level.name == "op_second":
        cols["errors_by_class"] = [json.dumps(dict(a.classes)) if a.classes else None for a in accs]
    cols["late"] = [a.late for a in accs]
    for j, name in enumerate(["p50_ms", "p90_ms", "p99_ms", "p999_ms", "max_ms"]):
        cols[name] = pa.array(stats[:, j], from_pandas=True)
    cols["service_hist"] = pa.array([hdr.encode_raw(a.svc) for a in accs], pa.binary())
    cols["response_hist"] = pa.array([hdr.encode_raw(a.resp) for a in accs], pa.binary())
    return pa.table(cols)
