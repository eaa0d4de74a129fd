"""Change points in a series of runs: E-divisive means (Matteson and James, 2014), the
method of Apache Otava (Hunter) and of the signal-processing-algorithms package.

Neither package installs beside loadtower (docs/store.md, "Run history"), so this is the
method itself, in numpy, in the form Hunter describes: a candidate split of a segment is
where the energy statistic Q̂ (the divergence of the two sides' distributions, from
the pairwise distances |x_i - x_j|) is largest; the candidate is kept when Student's
t-test between the two sides (pooled variance, so it works with a single run on one
side, as Hunter's tester does) says the sides differ, with its p-value multiplied by the
number of places the split could have been (Bonferroni: the split was chosen as the
best of them, so the plain p-value would overstate the evidence), and the pooled spread
taken as at least NOISE_FLOOR_PCT of the segment's mean (runs can repeat a figure
exactly). Each kept split divides its segment and both halves are searched again.

A change point is the index of the first run of the new level.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

MAX_P_VALUE = 0.01  # a split is kept when its corrected p-value is below this
MIN_CHANGE_PCT = 2.0  # and the level moves by at least this much (noise-sized steps are not news)
# the run-to-run spread assumed at least: this share of the segment's mean as a standard
# deviation. Runs can repeat a figure exactly (a percentile is an HDR bucket's value), and
# two equal runs beside a third would otherwise be a segment with no noise at all, which
# makes any step between them certain (p = 0): 4.327, 4.327, 3.955 ms was "an improvement"
NOISE_FLOOR_PCT = 1.0


@dataclass(frozen=True)
class ChangePoint:
    index: int  # the first value of the new level
    before: float  # the mean of the segment before it
    after: float  # the mean of the segment from it
    change_pct: float  # 100 * (after - before) / before
    p_value: float  # Student's t between the two segments, times the candidate places


def student_t_p_value(t: float, df: int) -> float:
    """Two-sided p-value of Student's t with `df` (whole) degrees of freedom, from the
    finite series for integer df (Abramowitz and Stegun 26.7.3, 26.7.4)."""
    if df < 1:
        return 1.0
    if math.isinf(t):
        return 0.0
    theta = math.atan(abs(t) / math.sqrt(df))
    s, c2 = math.sin(theta), math.cos(theta) ** 2
    if df % 2 == 1:
        term, total = math.cos(theta), 0.0
        if df > 1:
            total = term
            for k in range(3, df - 1, 2):
                term *= c2 * (k - 1) / k
                total += term
        inside = 2.0 / math.pi * (theta + s * total)
    else:
        term = total = 1.0
        for k in range(2, df - 1, 2):
            term *= c2 * (k - 1) / k
            total += term
        inside = s * total
    return min(1.0, max(0.0, 1.0 - inside))


def _pooled_t_p(left: np.ndarray, right: np.ndarray, floor_sd: float = 0.0) -> float:
    """Student's t p-value of the two sides' means (pooled variance), the pooled standard
    deviation taken as at least `floor_sd`."""
    n1, n2 = len(left), len(right)
    df = n1 + n2 - 2
    if n1 < 1 or n2 < 1 or df < 1:
        return 1.0
    ss = float(((left - left.mean()) ** 2).sum() + ((right - right.mean()) ** 2).sum())
    diff = float(right.mean() - left.mean())
    scale = max(math.sqrt(ss / df), floor_sd) * math.sqrt(1.0 / n1 + 1.0 / n2)
    if scale == 0.0:
        return 1.0 if diff == 0.0 else 0.0
    return student_t_p_value(diff / scale, df)


def energy_statistic(values: np.ndarray) -> np.ndarray:
    """Q̂ for a split before each index 1 .. m-1 of `values` (index 0 of the result is
    the split before index 1): Matteson and James's divergence with alpha = 1, weighted
    by tau (m - tau) / m."""
    m = len(values)
    if m < 2:
        return np.zeros(0)
    d = np.abs(values[:, None] - values[None, :])
    s = np.zeros((m + 1, m + 1))
    s[1:, 1:] = d.cumsum(0).cumsum(1)  # s[i, j] = sum of d[:i, :j]
    tau = np.arange(1, m)
    within_left = s[tau, tau] / 2.0  # each unordered pair once
    within_right = (s[m, m] - 2.0 * s[tau, m] + s[tau, tau]) / 2.0
    between = s[tau, m] - s[tau, tau]
    n1, n2 = tau.astype(float), (m - tau).astype(float)
    pairs1, pairs2 = n1 * (n1 - 1) / 2.0, n2 * (n2 - 1) / 2.0
    mean_left = np.divide(within_left, pairs1, out=np.zeros_like(n1), where=pairs1 > 0)
    mean_right = np.divide(within_right, pairs2, out=np.zeros_like(n2), where=pairs2 > 0)
    divergence = 2.0 * between / (n1 * n2) - mean_left - mean_right
    q: np.ndarray = n1 * n2 / m * divergence
    return q


def _split(
    values: np.ndarray, lo: int, hi: int, max_p: float, min_pct: float, found: list[ChangePoint]
) -> None:
    segment = values[lo:hi]
    if len(segment) < 3:  # one value on each side leaves no degree of freedom
        return
    q = energy_statistic(segment)
    tau = int(np.argmax(q)) + 1
    left, right = segment[:tau], segment[tau:]
    floor_sd = NOISE_FLOOR_PCT / 100.0 * abs(float(segment.mean()))
    p = min(1.0, _pooled_t_p(left, right, floor_sd) * (len(segment) - 1))
    before, after = float(left.mean()), float(right.mean())
    change = 100.0 * (after - before) / before if before else math.inf
    if p >= max_p or abs(change) < min_pct:
        return
    found.append(ChangePoint(lo + tau, before, after, change, p))
    _split(values, lo, lo + tau, max_p, min_pct, found)
    _split(values, lo + tau, hi, max_p, min_pct, found)


def _refit(values: np.ndarray, indexes: list[int], p_values: dict[int, float]) -> list[ChangePoint]:
    """Each change point's level before and after it: the means of its neighbouring
    segments once every split is known."""
    bounds = [0, *indexes, len(values)]
    out = []
    for k, index in enumerate(indexes):
        left, right = values[bounds[k] : index], values[index : bounds[k + 2]]
        before, after = float(left.mean()), float(right.mean())
        change = 100.0 * (after - before) / before if before else math.inf
        out.append(ChangePoint(index, before, after, change, p_values[index]))
    return out


def change_points(
    series: list[float] | np.ndarray,
    max_p_value: float = MAX_P_VALUE,
    min_change_pct: float = MIN_CHANGE_PCT,
) -> list[ChangePoint]:
    """The change points of `series` (no missing values), in order."""
    values = np.asarray(series, dtype=float)
    if values.ndim != 1 or not np.all(np.isfinite(values)):
        raise ValueError("change_points needs a flat series of finite numbers")
    found: list[ChangePoint] = []
    _split(values, 0, len(values), max_p_value, min_change_pct, found)
    indexes = sorted(c.index for c in found)
    return _refit(values, indexes, {c.index: c.p_value for c in found})
