"""Comparing two runs per phase and op, with Welch's t-test over per-second samples.

Rates are phase_summary's (``phase_rate.py``: a phase's ops over its measured duration),
so a run compared with itself shows no change, and a ramp's steps (``saturation@40``)
are rows of their own, paired by label across the runs.
"""

from __future__ import annotations

import math
from pathlib import Path
from statistics import fmean, variance
from typing import Any

from loadtower.store.reader import StoreReader

ALPHA = 0.01  # significance level: 1% chance of calling noise a change


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the incomplete beta function (Numerical Recipes)."""
    tiny, qab, qap, qam = 1e-300, a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        m2 = 2 * m
        for aa in (m * (b - m) * x / ((qam + m2) * (a + m2)),
                   -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))):  # fmt: skip
            d = 1.0 + aa * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + aa / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-12:
            break
    return h


def _betainc(a: float, b: float, x: float) -> float:
    if x <= 0.0 or x >= 1.0:
        return 0.0 if x <= 0.0 else 1.0
    front = math.exp(
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def welch_p_value(a: list[float], b: list[float]) -> float | None:
    """Two-sided p-value of Welch's t-test; None with fewer than 2 samples on a side."""
    if len(a) < 2 or len(b) < 2:
        return None
    va, vb = variance(a) / len(a), variance(b) / len(b)
    if va + vb == 0:
        return 1.0 if fmean(a) == fmean(b) else 0.0
    t = (fmean(a) - fmean(b)) / math.sqrt(va + vb)
    df = (va + vb) ** 2 / (va**2 / (len(a) - 1) + vb**2 / (len(b) - 1))
    return _betainc(df / 2.0, 0.5, df / (df + t * t))


def _change(a: float | None, b: float | None) -> float | None:
    if a is None or b is None or a == 0:
        return None
    return 100.0 * (b - a) / a


def compare_runs(store_path: Path | str, run_a: str, run_b: str) -> list[dict[str, Any]]:
    """Per phase and op present in both runs: throughput and p99 of A and B, the change in
    percent, Welch p-values over the per-second samples and whether the change is significant."""
    reader = StoreReader(store_path)
    summaries = {run: {(r["phase"], r["op"]): r for r in reader.phase_summary(run)}
                 for run in (run_a, run_b)}  # fmt: skip
    seconds: dict[str, dict[tuple[Any, ...], list[dict[str, Any]]]] = {}
    for run in (run_a, run_b):
        seconds[run] = {}
        for row in reader.op_seconds(run):
            seconds[run].setdefault((row["phase"], row["op"]), []).append(row)
    out = []
    for key, sa in summaries[run_a].items():
        sb = summaries[run_b].get(key)
        if sb is None:
            continue
        xa, xb = seconds[run_a].get(key, []), seconds[run_b].get(key, [])
        p_ops = welch_p_value([float(r["ops"]) for r in xa], [float(r["ops"]) for r in xb])
        p_p99 = welch_p_value(
            [r["p99_ms"] for r in xa if r["p99_ms"] is not None],
            [r["p99_ms"] for r in xb if r["p99_ms"] is not None],
        )
        sig_ops = p_ops is not None and p_ops < ALPHA
        sig_p99 = p_p99 is not None and p_p99 < ALPHA
        out.append(
            {
                "phase": key[0],
                "op": key[1],
                "ops_per_s_a": sa["ops_per_s"],
                "ops_per_s_b": sb["ops_per_s"],
                "ops_change_pct": _change(sa["ops_per_s"], sb["ops_per_s"]),
                "ops_p_value": p_ops,
                "p99_ms_a": sa["p99_ms"],
                "p99_ms_b": sb["p99_ms"],
                "p99_change_pct": _change(sa["p99_ms"], sb["p99_ms"]),
                "p99_p_value": p_p99,
                "significant_ops": sig_ops,
                "significant_p99": sig_p99,
                "significant": sig_ops or sig_p99,
                **{f"{m}_{side}": row.get(m)
                   for m in ("ops", "duration_s", "p50_ms", "p90_ms", "max_ms", "errors",
                             "tombstones_p50", "tombstones_p99")
                   for side, row in (("a", sa), ("b", sb))},
            }
        )
    return out
