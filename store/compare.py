"""Comparing two runs per phase and op: the change of ops/s and p99, its 99% interval
and a verdict that holds when per-second samples are autocorrelated (significance.py,
docs/statistics.md).

Rates are phase_summary's (``phase_rate.py``: a phase's ops over its measured duration),
so a run compared with itself shows no change, and a ramp's steps (``saturation@40``)
are rows of their own, paired by label across the runs. The p99 is the merged
histograms' (phase_summary's); its interval comes from the per-second histograms.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from loadtower.store import hdr
from loadtower.store.reader import StoreReader
from loadtower.store.significance import ALPHA as ALPHA
from loadtower.store.significance import Change, SecondHists, percentile_change, rate_change
from loadtower.store.significance import interval_text as interval_text
from loadtower.store.significance import welch_p_value as welch_p_value  # the former method

Key = tuple[Any, ...]


def _change(a: float | None, b: float | None) -> float | None:
    if a is None or b is None or a == 0:
        return None
    return 100.0 * (b - a) / a


def _seconds(reader: StoreReader, run: str) -> dict[Key, list[dict[str, Any]]]:
    out: dict[Key, list[dict[str, Any]]] = {}
    for row in reader.op_second_hists(run):
        out.setdefault((row["phase"], row["op"]), []).append(row)
    return out


def _second_hists(sides: list[list[dict[str, Any]]]) -> list[SecondHists]:
    """Each side's per-second histograms (sparse), over the buckets either side uses."""
    blobs = [bytes(r["hist"]) for rows in sides for r in rows if r["hist"] is not None]
    owner = [(s, i) for s, rows in enumerate(sides) for i, r in enumerate(rows)
             if r["hist"] is not None]  # fmt: skip
    no, idx, cnt = hdr.decode_many(blobs, b64=False)
    used, col = np.unique(idx, return_inverse=True)
    values = hdr.HIGH_VALUES[used] / 1000.0
    side_of = np.asarray([s for s, _ in owner], np.int64)[no] if owner else np.zeros(0, np.int64)
    row_of = np.asarray([i for _, i in owner], np.int64)[no] if owner else np.zeros(0, np.int64)
    return [SecondHists(row_of[side_of == s], col[side_of == s], cnt[side_of == s], len(rows),
                        values) for s, rows in enumerate(sides)]  # fmt: skip


def _ops_series(rows: list[dict[str, Any]]) -> list[float]:
    """Ops per second from the first to the last second of the rows, a second without a
    row counted as 0 ops (a stall is part of the rate's spread)."""
    if not rows:
        return []
    first = int(rows[0]["ts"])
    out = [0.0] * (int(rows[-1]["ts"]) - first + 1)
    for r in rows:
        out[int(r["ts"]) - first] += float(r["ops"])
    return out


def _fields(prefix: str, change: Change) -> dict[str, Any]:
    return {
        f"{prefix}_change_ci_pct": list(change.ci_pct) if change.ci_pct else None,
        f"{prefix}_verdict": change.verdict,
        f"{prefix}_n_eff": [round(change.n_eff[0], 1), round(change.n_eff[1], 1)],
    }


def compare_runs(store_path: Path | str, run_a: str, run_b: str) -> list[dict[str, Any]]:
    """Per phase and op present in both runs: throughput and p99 of A and B, the change in
    percent, its 99% interval (``*_change_ci_pct``: [low, high], None when too short) and
    the verdict (``ops_verdict``, ``p99_verdict``: regression, improvement, no change or
    too short to tell); ``significant_*`` is True for a regression or an improvement."""
    reader = StoreReader(store_path)
    summaries = {run: {(r["phase"], r["op"]): r for r in reader.phase_summary(run)}
                 for run in (run_a, run_b)}  # fmt: skip
    seconds = {run: _seconds(reader, run) for run in (run_a, run_b)}
    out = []
    for key, sa in summaries[run_a].items():
        sb = summaries[run_b].get(key)
        if sb is None:
            continue
        xa, xb = seconds[run_a].get(key, []), seconds[run_b].get(key, [])
        ops_pct = _change(sa["ops_per_s"], sb["ops_per_s"])
        p99_pct = _change(sa["p99_ms"], sb["p99_ms"])
        ops = rate_change(_ops_series(xa), _ops_series(xb), center_pct=ops_pct)
        hists_a, hists_b = _second_hists([xa, xb])
        p99 = percentile_change(hists_a, hists_b, 99.0, center_pct=p99_pct)
        out.append(
            {
                "phase": key[0],
                "op": key[1],
                "ops_per_s_a": sa["ops_per_s"],
                "ops_per_s_b": sb["ops_per_s"],
                "ops_change_pct": ops_pct,
                **_fields("ops", ops),
                "p99_ms_a": sa["p99_ms"],
                "p99_ms_b": sb["p99_ms"],
                "p99_change_pct": p99_pct,
                **_fields("p99", p99),
                "significant_ops": ops.significant,
                "significant_p99": p99.significant,
                "significant": ops.significant or p99.significant,
                **{f"{m}_{side}": row.get(m)
                   for m in ("ops", "duration_s", "p50_ms", "p90_ms", "max_ms", "errors",
                             "tombstones_p50", "tombstones_p99")
                   for side, row in (("a", sa), ("b", sb))},
            }
        )
    return out
