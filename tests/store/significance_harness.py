"""A/A and power harness for compare's significance: pairs of AR(1) series (per-second
samples with memory) and per-second HDR histograms whose level follows an AR(1).

Shared by tests/store/test_significance.py and bench/significance.py (which prints the
old method's rates, Welch's t-test over the raw samples, beside the new one's).
Deterministic: every draw comes from a seeded numpy Generator.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from loadtower.store import hdr
from loadtower.store.significance import (
    ALPHA,
    SecondHists,
    percentile_change,
    rate_intervals,
    t_critical,
    welch_p_value,
)

PHIS = (0.0, 0.5, 0.8, 0.9)
SECONDS = 60
PAIRS = 400
CV = 0.05  # per-second spread: the samples' standard deviation is 5% of their mean
SHIFT = 0.10  # the true change the power test asks to find


def ar1(rng: np.random.Generator, pairs: int, n: int, phi: float) -> np.ndarray:
    """`pairs` stationary AR(1) series of `n` samples with unit variance."""
    e = rng.standard_normal((pairs, n))
    x = np.empty_like(e)
    x[:, 0] = e[:, 0]
    scale = math.sqrt(1.0 - phi * phi)
    for t in range(1, n):
        x[:, t] = phi * x[:, t - 1] + scale * e[:, t]
    return x


def series(rng: np.random.Generator, pairs: int, n: int, phi: float, cv: float = CV,
           mean: float = 1000.0) -> np.ndarray:
    """Per-second samples (e.g. ops/s) around `mean` with a `cv` spread."""
    return mean * (1.0 + cv * ar1(rng, pairs, n, phi))


@dataclass(frozen=True)
class Rates:
    phi: float
    false_new: float  # A/A pairs called significant by the new method
    false_old: float  # ... by Welch's t-test over the raw samples (p < ALPHA)
    too_short_aa: float  # A/A pairs the new method calls too short to tell
    power_new: float  # pairs with a true SHIFT found (the right direction)
    power_old: float


def welch_significant(a: np.ndarray, b: np.ndarray, exact: bool = False) -> np.ndarray:
    """Per pair of rows: Welch's t-test over the raw samples at p < ALPHA (compare's former
    method). `exact` runs welch_p_value itself per pair; else the same test vectorised
    (|t| beyond Student's critical value at Welch's df: the same verdicts, except within
    the t-table's interpolation above 30 df)."""
    if exact:
        found = [welch_p_value(list(x), list(y)) for x, y in zip(a, b, strict=True)]
        return np.asarray([p is not None and p < ALPHA for p in found])
    n_a, n_b = a.shape[1], b.shape[1]
    va, vb = a.var(axis=1, ddof=1) / n_a, b.var(axis=1, ddof=1) / n_b
    t = np.abs(a.mean(axis=1) - b.mean(axis=1)) / np.sqrt(va + vb)
    df = (va + vb) ** 2 / (va**2 / (n_a - 1) + vb**2 / (n_b - 1))
    return np.asarray(t > t_critical(df, ALPHA))


def rate_table(phis: tuple[float, ...] = PHIS, pairs: int = PAIRS, n: int = SECONDS,
               cv: float = CV, shift: float = SHIFT, seed: int = 20261127,
               old: bool = True, exact: bool = False) -> list[Rates]:
    """False "significant" rate (A/A) and power (B = A's process * (1 + shift)) per phi."""
    rng = np.random.default_rng(seed)
    out = []
    for phi in phis:
        a, b = series(rng, pairs, n, phi, cv), series(rng, pairs, n, phi, cv)
        shifted = series(rng, pairs, n, phi, cv) * (1.0 + shift)
        low, high, short, _na, _nb = rate_intervals(a, b)
        false_new = float((((low > 0) | (high < 0)) & ~short).mean())
        low_s, _high_s, short_s, _, _ = rate_intervals(a, shifted)
        power_new = float(((low_s > 0) & ~short_s).mean())
        false_old = power_old = math.nan
        if old:
            false_old = float(welch_significant(a, b, exact).mean())
            power_old = float((welch_significant(a, shifted, exact)
                               & (shifted.mean(axis=1) > a.mean(axis=1))).mean())
        out.append(Rates(phi, false_new, false_old, float(short.mean()), power_new, power_old))
    return out


def histograms(rng: np.random.Generator, n: int, phi: float, per_second: int = 400,
               level_sd: float = 0.05, scale: float = 1.0) -> np.ndarray:
    """Per-second latency HDR bucket indices (n, per_second): lognormal latencies around
    1.5 ms whose per-second log-level follows an AR(1) with `level_sd`."""
    level = level_sd * ar1(rng, 1, n, phi)[0]
    lat_us = np.exp(rng.normal(math.log(1500.0), 0.5, (n, per_second)) + level[:, None]) * scale
    return np.searchsorted(hdr.HIGH_VALUES, np.clip(lat_us, 1, hdr.HIGHEST).astype(np.int64))


def drifting_histograms(rng: np.random.Generator, n: int, phi: float = 0.9,
                        per_second: int = 50, level_sd: float = 0.25, tail_share: float = 0.03,
                        tail_scale: float = 1.0) -> np.ndarray:
    """Per-second latency HDR bucket indices (n, per_second) with a drifting median and a
    sampled tail (issue 32's case): a body around 1 ms whose log-level follows an AR(1)
    with `level_sd` (so the median drifts, as a cache warming or a compaction make it) and,
    drawn independently in every second, a `tail_share` of ops around 4 ms (times
    `tail_scale`). At 50 ops/s about 0.5 ops a second are beyond the p99: the tail share's
    per-second variation is binomial sampling noise, without the median's memory."""
    level = level_sd * ar1(rng, 1, n, phi)[0]
    body = np.exp(rng.normal(math.log(1000.0), 0.3, (n, per_second)) + level[:, None])
    tail = np.exp(rng.normal(math.log(4000.0), 0.5, (n, per_second))) * tail_scale
    lat_us = np.where(rng.random((n, per_second)) < tail_share, tail, body)
    return np.searchsorted(hdr.HIGH_VALUES, np.clip(lat_us, 1, hdr.HIGHEST).astype(np.int64))


def counts_pair(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Two runs' bucket indices as per-second count matrices over the buckets either uses,
    with those buckets' values in ms."""
    first = int(min(a.min(), b.min()))
    width = int(max(a.max(), b.max())) - first + 1
    out = []
    for part in (a, b):
        flat = (np.arange(part.shape[0])[:, None] * width + (part - first)).ravel()
        out.append(np.bincount(flat, minlength=part.shape[0] * width).reshape(-1, width))
    used = (out[0].sum(axis=0) + out[1].sum(axis=0)) > 0
    values = hdr.HIGH_VALUES[first: first + width][used] / 1000.0
    return out[0][:, used], out[1][:, used], values


def percentile_trials(phi: float, pairs: int, scale_b: float, n: int = SECONDS,
                      seed: int = 7, drifting: bool = False
                      ) -> list[tuple[float, tuple[float, float] | None, str]]:
    """Per pair: the true change of p99 in percent (B's latencies are A's process times
    `scale_b`), the interval of the change and the verdict. `drifting`: the histograms
    are drifting_histograms' (the median's level with memory phi, a sampled tail; B's
    tail times `scale_b`), else histograms' (the whole distribution's level)."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(pairs):
        if drifting:
            a_idx = drifting_histograms(rng, n, phi)
            b_idx = drifting_histograms(rng, n, phi, tail_scale=scale_b)
        else:
            a_idx, b_idx = histograms(rng, n, phi), histograms(rng, n, phi, scale=scale_b)
        a, b, values = counts_pair(a_idx, b_idx)
        change = percentile_change(SecondHists.from_dense(a, values),
                                   SecondHists.from_dense(b, values))
        out.append((100.0 * (scale_b - 1.0), change.ci_pct, change.verdict))
    return out
