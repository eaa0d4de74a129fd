"""Whether a change between two runs is real, when per-second samples are autocorrelated.

A phase's per-second samples have memory (GC, compaction, caches), so n seconds carry
fewer than n independent observations; a t-test over them (Welch's, as compare used to
run) overstates its confidence. Here each run's estimate gets a variance from an
effective sample size (docs/statistics.md):

- the lag-1 autocorrelation r of the per-second series, corrected for its small-sample
  bias (Marriott and Pope: E[r] ~ phi - (1 + 3 phi) / n) and raised by half its standard
  error (sqrt((1 - r^2) / n)), so that an unlucky low estimate does not shrink the
  interval: an AR(1) phi, clipped to [0, 0.98];
- n_eff = n / (1 + 2 sum_k (1 - k/n) phi^k), the exact AR(1) variance inflation of a mean
  of n samples, and the variance of a sample sigma^2 = SS / (n - n / n_eff) (the plain
  SS / (n - 1) is biased low when samples are correlated);
- rates: the mean of the per-second ops; percentiles: the percentile of the MERGED
  histograms, with Woodruff's interval: the standard error of the merged CDF at the
  percentile comes from the per-second share of ops at or below it, a mean of two
  variance components: the per-second binomial sampling of the ops (known from the
  counts, independent across seconds) and the level's variation beyond it (raised by
  LEVEL_MARGIN standard errors of the sampling), which alone carries memory (phi the
  larger of that share's and the median share's, whose memory shows through far less
  sampling noise, undiluted of it); or, when smaller, phi charged to the whole
  variance; n_eff is the seconds the mean is worth; mapped back through the merged
  histogram's quantiles;
- the change is the log ratio B / A, its interval log ratio +- t(df) * se with Welch's
  degrees of freedom from each side's n_eff - 1, shown in percent; the verdict is a
  regression or an improvement when the whole interval is on one side of 0.

A side with fewer than MIN_SECONDS seconds, fewer than MIN_EFFECTIVE effective samples
or (percentiles) fewer than MIN_TAIL_OPS ops beyond the percentile is "too short to tell".
Everything is vectorised over leading axes so that bench/significance.py and the unit
tests run thousands of pairs at once; numpy only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from statistics import fmean, variance

import numpy as np

ALPHA = 0.01  # the interval is 99%: a 1% chance of calling noise a change
MIN_SECONDS = 10  # per side
MIN_EFFECTIVE = 5.0  # effective samples per side
MIN_TAIL_OPS = 10  # ops beyond the percentile, per side: fewer cannot place it
MAX_PHI = 0.98
BIAS_MARGIN = 0.5  # standard errors of r added to the bias-corrected lag-1 autocorrelation
LEVEL_MARGIN = 1.0  # standard errors of the sampling's sum of squares added to the level's

REGRESSION, IMPROVEMENT, NO_CHANGE, TOO_SHORT = (
    "regression", "improvement", "no change", "too short to tell")  # fmt: skip
VERDICTS = (REGRESSION, IMPROVEMENT, NO_CHANGE, TOO_SHORT)


@dataclass(frozen=True)
class Change:
    """One figure's change from A to B: `ci_pct` is [low, high] in percent (None when too
    short), `verdict` one of VERDICTS, `n_eff` each side's effective sample size."""

    ci_pct: tuple[float, float] | None
    verdict: str
    n_eff: tuple[float, float]

    @property
    def significant(self) -> bool:
        return self.verdict in (REGRESSION, IMPROVEMENT)


def interval_text(ci: list[float] | tuple[float, float] | None) -> str:
    """A change's 99% interval as compare, the TUI and the report print it:
    "[-2.1%, +4.0%]"; "" when there is none (too short to tell)."""
    return "" if ci is None else f"[{ci[0]:+.1f}%, {ci[1]:+.1f}%]"


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


def betainc(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b)."""
    if x <= 0.0 or x >= 1.0:
        return 0.0 if x <= 0.0 else 1.0
    front = math.exp(
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def welch_p_value(a: list[float], b: list[float]) -> float | None:
    """Two-sided p-value of Welch's t-test over raw samples; None with fewer than 2 on a side.
    compare's former method, kept so bench/significance.py can show what it got wrong."""
    if len(a) < 2 or len(b) < 2:
        return None
    va, vb = variance(a) / len(a), variance(b) / len(b)
    if va + vb == 0:
        return 1.0 if fmean(a) == fmean(b) else 0.0
    t = (fmean(a) - fmean(b)) / math.sqrt(va + vb)
    df = (va + vb) ** 2 / (va**2 / (len(a) - 1) + vb**2 / (len(b) - 1))
    return betainc(df / 2.0, 0.5, df / (df + t * t))


def t_two_sided_p(t: float, df: float) -> float:
    """Two-sided p-value of Student's t with `df` degrees of freedom."""
    return betainc(df / 2.0, 0.5, df / (df + t * t))


def _t_exact(df: float, alpha: float) -> float:
    lo, hi = 0.0, 1e4
    for _ in range(80):
        mid = (lo + hi) / 2.0
        lo, hi = (mid, hi) if t_two_sided_p(mid, df) > alpha else (lo, mid)
    return hi


_TABLE_DF = np.concatenate([np.arange(1.0, 31.0), [40.0, 60.0, 120.0, 240.0, 1e6]])


@lru_cache(maxsize=8)
def _t_table(alpha: float) -> np.ndarray:
    return np.asarray([_t_exact(float(df), alpha) for df in _TABLE_DF])


def t_critical(df: np.ndarray | float, alpha: float = ALPHA) -> np.ndarray:
    """Two-sided critical value of Student's t, vectorised: exact at whole df up to 30
    (df is rounded down, at least 1: that only widens an interval), linear in 1/df
    between the table's df above 30 (a textbook t-table's interpolation)."""
    d = np.maximum(np.asarray(df, dtype=float), 1.0)
    d = np.where(d <= 30.0, np.floor(d), d)
    inv = 1.0 / _TABLE_DF[::-1]  # ascending
    return np.asarray(np.interp(1.0 / d, inv, _t_table(alpha)[::-1]), dtype=float)


def lag1(x: np.ndarray) -> np.ndarray:
    """Lag-1 autocorrelation along the last axis (0 for a constant series)."""
    d = x - x.mean(axis=-1, keepdims=True)
    ss = (d * d).sum(axis=-1)
    cross = (d[..., 1:] * d[..., :-1]).sum(axis=-1)
    return np.where(ss > 0, cross / np.where(ss > 0, ss, 1.0), 0.0)


def cautious_lag1(x: np.ndarray) -> np.ndarray:
    """Each series' (last axis) lag-1 autocorrelation, bias-corrected, plus BIAS_MARGIN of
    its standard error; not yet clipped."""
    n = x.shape[-1]
    r = lag1(x)
    r = r + (1.0 + 3.0 * r) / n
    return np.asarray(r + BIAS_MARGIN * np.sqrt(np.clip(1.0 - r * r, 0.0, 1.0) / n), dtype=float)


def _phi(r: np.ndarray) -> np.ndarray:
    return np.asarray(np.clip(r, 0.0, MAX_PHI), dtype=float)


def ar1_phi(x: np.ndarray) -> np.ndarray:
    """A cautious AR(1) coefficient of each series (last axis): cautious_lag1 in
    [0, MAX_PHI]."""
    return _phi(cautious_lag1(x))


def level_share(x: np.ndarray, sampling: np.ndarray | float) -> np.ndarray:
    """The level's share of each series' per-second variance when that variance also holds
    `sampling` of independent noise (1 where the variance shows no level beyond it). The
    noise has no memory and dilutes the lag-1 autocorrelation by this share, so the
    level's own phi is cautious_lag1 divided by it."""
    n = x.shape[-1]
    d = x - x.mean(axis=-1, keepdims=True)
    v = (d * d).sum(axis=-1) / max(n - 1, 1)
    return np.where(v > sampling, (v - sampling) / np.where(v > 0, v, 1.0), 1.0)


def effective_size(n: int, phi: np.ndarray) -> np.ndarray:
    """n / (1 + 2 sum_{k<n} (1 - k/n) phi^k): as many independent samples as the mean of
    n AR(1) samples is worth."""
    if n < 2:
        return np.full(np.shape(phi), float(n))
    k = np.arange(1, n, dtype=float)
    inflation = 1.0 + 2.0 * ((1.0 - k / n) * np.asarray(phi)[..., None] ** k).sum(axis=-1)
    return np.asarray(n / inflation, dtype=float)


def mean_variance(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per series (last axis): its mean, the variance of that mean, and n_eff."""
    n = x.shape[-1]
    n_eff = effective_size(n, ar1_phi(x))
    d = x - x.mean(axis=-1, keepdims=True)
    sigma2 = (d * d).sum(axis=-1) / np.maximum(n - n / n_eff, 1.0)
    return x.mean(axis=-1), sigma2 / n_eff, n_eff


def log_ratio_interval(
    center: np.ndarray, var_a: np.ndarray, n_eff_a: np.ndarray, var_b: np.ndarray,
    n_eff_b: np.ndarray, alpha: float = ALPHA,
) -> tuple[np.ndarray, np.ndarray]:
    """[low, high] of log(B / A) around `center`, from the variances of log A and log B
    and Welch-Satterthwaite degrees of freedom over each side's n_eff - 1."""
    var = var_a + var_b
    dfa, dfb = np.maximum(n_eff_a - 1.0, 1.0), np.maximum(n_eff_b - 1.0, 1.0)
    denom = var_a**2 / dfa + var_b**2 / dfb
    df = np.where(denom > 0, var**2 / np.where(denom > 0, denom, 1.0), dfa + dfb)
    half = t_critical(df, alpha) * np.sqrt(var)
    return center - half, center + half


def verdicts(low: np.ndarray, high: np.ndarray, short: np.ndarray, worse_if_up: bool
             ) -> np.ndarray:
    """Per interval of the change (percent or log ratio): its verdict (VERDICTS)."""
    up, down = np.asarray(low) > 0, np.asarray(high) < 0
    worse, better = (up, down) if worse_if_up else (down, up)
    out = np.where(worse, REGRESSION, np.where(better, IMPROVEMENT, NO_CHANGE))
    return np.where(short, TOO_SHORT, out)


def rate_intervals(a: np.ndarray, b: np.ndarray, alpha: float = ALPHA
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Per pair of series (last axis: seconds): [low, high] of the change of the mean in
    percent, whether a side is too short, and each side's n_eff. Vectorised over pairs."""
    ma, va, na = mean_variance(np.asarray(a, dtype=float))
    mb, vb, nb = mean_variance(np.asarray(b, dtype=float))
    ok = (ma > 0) & (mb > 0)
    safe_a, safe_b = np.where(ok, ma, 1.0), np.where(ok, mb, 1.0)
    center = np.log(safe_b / safe_a)
    low, high = log_ratio_interval(center, va / safe_a**2, na, vb / safe_b**2, nb, alpha)
    short = (~ok | (min(a.shape[-1], b.shape[-1]) < MIN_SECONDS)
             | (na < MIN_EFFECTIVE) | (nb < MIN_EFFECTIVE))  # fmt: skip
    return 100.0 * np.expm1(low), 100.0 * np.expm1(high), short, na, nb


def _interval(low: float, high: float, short: bool) -> tuple[float, float] | None:
    return None if short else (float(low), float(high))


def _recenter(interval: tuple[float, float], center_pct: float | None) -> tuple[float, float]:
    """The interval (percent) moved, in log space, so that its middle is `center_pct`."""
    if center_pct is None or center_pct <= -100.0:
        return interval
    low, high = math.log1p(interval[0] / 100.0), math.log1p(interval[1] / 100.0)
    shift = math.log1p(center_pct / 100.0) - 0.5 * (low + high)
    return 100.0 * math.expm1(low + shift), 100.0 * math.expm1(high + shift)


def _judged(interval: tuple[float, float] | None, worse_if_up: bool, n_eff: tuple[float, float]
            ) -> Change:
    if interval is None:
        return Change(None, TOO_SHORT, n_eff)
    verdict = str(verdicts(np.asarray([interval[0]]), np.asarray([interval[1]]),
                           np.asarray([False]), worse_if_up)[0])
    return Change(interval, verdict, n_eff)


def rate_change(a: list[float], b: list[float], center_pct: float | None = None,
                worse_if_up: bool = False) -> Change:
    """The change of a per-second rate (ops/s) from A's seconds to B's (a fall is a
    regression). The interval is centred on `center_pct` when given (the phase's own
    figure: ops over its measured duration), else on the change of the per-second means."""
    if len(a) < 2 or len(b) < 2:
        return Change(None, TOO_SHORT, (float(len(a)), float(len(b))))
    xa, xb = np.asarray(a, dtype=float)[None, :], np.asarray(b, dtype=float)[None, :]
    low, high, short, na, nb = rate_intervals(xa, xb)
    n_eff = (float(na[0]), float(nb[0]))
    if short[0]:
        return Change(None, TOO_SHORT, n_eff)
    return _judged(_recenter((float(low[0]), float(high[0])), center_pct), worse_if_up, n_eff)


def _quantile(cum: np.ndarray, total: float, values: np.ndarray, fraction: np.ndarray
              ) -> np.ndarray:
    """HDR's rule on merged cumulative counts: the value of the first bucket holding the
    rank max(round(fraction * total), 1)."""
    rank = np.maximum(np.floor(np.clip(fraction, 0.0, 1.0) * total + 0.5), 1.0)
    idx = np.minimum(np.searchsorted(cum, rank, side="left"), cum.size - 1)
    return np.asarray(values[idx], dtype=float)


@dataclass(frozen=True)
class SecondHists:
    """One phase's per-second histograms, sparse: entry k is `cnt[k]` ops of second
    `row[k]` (0 .. seconds - 1) in the bucket whose reported value is `values[col[k]]`
    (values ascending, ms). Sparse so that a day-long phase costs its entries only."""

    row: np.ndarray
    col: np.ndarray
    cnt: np.ndarray
    seconds: int
    values: np.ndarray

    @classmethod
    def from_dense(cls, counts: np.ndarray, values: np.ndarray) -> SecondHists:
        """From a (seconds, buckets) count matrix over `values`."""
        row, col = np.nonzero(np.asarray(counts))
        return cls(row, col, np.asarray(counts)[row, col], int(np.shape(counts)[0]),
                   np.asarray(values, dtype=float))

    def per_second(self, keep: np.ndarray | None = None) -> np.ndarray:
        """Ops per second, only of the entries in `keep` when given."""
        rows, cnt = (self.row, self.cnt) if keep is None else (self.row[keep], self.cnt[keep])
        return np.bincount(rows, weights=cnt, minlength=self.seconds)


def _level_variance(ss: float, n: int, sampling: float, sd_ss: float, n_eff_level: float
                    ) -> float:
    """The level's part of a series' per-second variance, cautious: the sum of squares
    holds (n - 1) times the sampling variance and (n - n / n_eff_level) times the level's
    (its mean absorbs the rest); what is beyond the sampling's share, raised by
    LEVEL_MARGIN of the sampling's own standard error `sd_ss` (that noise alone can hide a
    level as large), never below 0."""
    excess = ss - (n - 1) * sampling + LEVEL_MARGIN * sd_ss
    return max(excess, 0.0) / max(n - n / n_eff_level, 1.0)


def percentile_estimate(hists: SecondHists, pct: float
                        ) -> tuple[float, float, float, int, int] | None:
    """The percentile of the merged histogram, the variance of its log (Woodruff), n_eff,
    the ops beyond it and the seconds with ops. None without ops."""
    values = hists.values
    per_second = hists.per_second()
    with_ops = per_second > 0
    if not with_ops.any():
        return None
    per_second = per_second[with_ops]
    total = float(per_second.sum())
    cum = np.cumsum(np.bincount(hists.col, weights=hists.cnt, minlength=values.size))
    p = pct / 100.0
    q = float(_quantile(cum, total, values, np.asarray([p]))[0])
    at_or_below = hists.per_second(values[hists.col] <= q)[with_ops]
    share = at_or_below.sum() / total
    # the merged CDF at q is a ratio of sums: its linearised per-second terms
    z = (at_or_below - per_second * share) / per_second.mean()
    n = z.size
    # variance components of z (docs/statistics.md): per-second binomial sampling of the
    # ops at or below q (independent across seconds, known from the counts) and the
    # level's variation beyond it, which alone carries memory (phi: the larger of z's and
    # the median share's, which shows the level's memory through far less sampling noise)
    nbar = float(per_second.mean())
    lam = per_second * share * (1.0 - share)  # binomial variance of each second's count
    sampling = float(lam.sum()) / n / nbar**2
    # the standard error of the sampling's sum of squares: a binomial count's centred
    # square has variance lam + 2 lam^2 (its fourth moment, large N)
    sd_ss = math.sqrt(float((lam + 2.0 * lam * lam).sum())) / nbar**2
    median = float(_quantile(cum, total, values, np.asarray([0.5]))[0])
    z50 = hists.per_second(values[hists.col] <= median)[with_ops] / per_second
    p50 = float(z50 @ per_second) / total
    phi_z = ar1_phi(z[None, :])
    r50 = cautious_lag1(z50[None, :])  # once: divided by its level share, and as it is
    share50 = level_share(z50[None, :], float(np.mean(p50 * (1.0 - p50) / per_second)))
    phi = np.maximum(phi_z, _phi(r50 / share50))
    n_eff_level = float(effective_size(n, phi)[0])
    d = z - z.mean()
    ss = float((d * d).sum())
    level = _level_variance(ss, n, sampling, sd_ss, n_eff_level)
    var_share = sampling / n + level / n_eff_level
    n_eff = float((sampling + level) / var_share) if var_share > 0 else float(n)
    # phi (the median's undiluted) charged to the WHOLE variance is the other cautious
    # bound (it charges memory to noise that has none): the smaller holds
    n_eff_all = float(effective_size(n, np.maximum(phi_z, _phi(r50)))[0])
    var_all = ss / max(n - n / n_eff_all, 1.0) / n_eff_all
    if var_all < var_share:
        var_share, n_eff = var_all, n_eff_all
    probe = 2.576 * math.sqrt(var_share)  # a normal 99% half-width
    lo_q, hi_q = _quantile(cum, total, values, np.asarray([p - probe, p + probe]))
    se_log = (math.log(hi_q) - math.log(lo_q)) / (2 * 2.576)
    return q, se_log**2, n_eff, int(round(total - share * total)), n


def percentile_change(hists_a: SecondHists, hists_b: SecondHists, pct: float = 99.0,
                      center_pct: float | None = None, alpha: float = ALPHA) -> Change:
    """The change of a percentile of the merged per-second histograms from A to B (a rise
    is a regression); the interval centred on `center_pct` when given."""
    est_a = percentile_estimate(hists_a, pct)
    est_b = percentile_estimate(hists_b, pct)
    if est_a is None or est_b is None:
        return Change(None, TOO_SHORT, (est_a[2] if est_a else 0.0, est_b[2] if est_b else 0.0))
    (qa, va, na, tail_a, secs_a), (qb, vb, nb, tail_b, secs_b) = est_a, est_b
    seconds = min(secs_a, secs_b)
    short = (seconds < MIN_SECONDS or min(na, nb) < MIN_EFFECTIVE
             or min(tail_a, tail_b) < MIN_TAIL_OPS or qa <= 0 or qb <= 0)  # fmt: skip
    if short:
        return Change(None, TOO_SHORT, (na, nb))
    low, high = log_ratio_interval(np.asarray([math.log(qb / qa)]), np.asarray([va]),
                                   np.asarray([na]), np.asarray([vb]), np.asarray([nb]), alpha)
    interval = (100.0 * math.expm1(float(low[0])), 100.0 * math.expm1(float(high[0])))
    return _judged(_recenter(interval, center_pct), True, (na, nb))
