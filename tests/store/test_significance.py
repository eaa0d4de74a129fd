"""compare's significance holds under autocorrelation (issue 32's A/A and power tests).

A/A: pairs of AR(1) series from the SAME process (phi 0, 0.5, 0.8, 0.9; 60 seconds;
400 pairs each): the new method calls at most 2% of them a change at alpha = 1%; Welch's
t-test over the raw samples (compare's former method), from the same pairs, calls far
more. Power: a true 10% shift at phi = 0.5 is found in >= 80% of pairs. Percentiles: on
synthetic per-second HDR histograms, the interval of the merged p99's change holds the
true change. Deterministic (seeded); bench/significance.py prints the table.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from loadtower.store import hdr
from loadtower.store.significance import (
    MIN_EFFECTIVE,
    MIN_SECONDS,
    NO_CHANGE,
    REGRESSION,
    TOO_SHORT,
    SecondHists,
    effective_size,
    percentile_change,
    percentile_estimate,
    rate_change,
    t_critical,
    welch_p_value,
)
from tests.store.significance_harness import (
    PHIS,
    ar1,
    counts_pair,
    drifting_histograms,
    histograms,
    percentile_trials,
    rate_table,
)


@pytest.fixture(scope="module")
def table() -> dict[float, object]:
    return {r.phi: r for r in rate_table()}


@pytest.mark.parametrize("phi", PHIS)
def test_aa_false_rate_at_most_2pct(table: dict, phi: float) -> None:
    row = table[phi]
    assert row.false_new <= 0.02, row
    if phi >= 0.5:  # the harness does show what was wrong: Welch is overconfident
        assert row.false_old > 0.08 and row.false_old > 5 * row.false_new, row


def test_power_at_phi_half(table: dict) -> None:
    assert table[0.5].power_new >= 0.80, table[0.5]
    assert table[0.0].power_new >= 0.95, table[0.0]


def test_vectorised_welch_matches_the_scalar_one() -> None:
    rng = np.random.default_rng(3)
    a, b = ar1(rng, 200, 60, 0.5), ar1(rng, 200, 60, 0.5) + 0.3
    from tests.store.significance_harness import welch_significant

    assert (welch_significant(a, b) == welch_significant(a, b, exact=True)).mean() >= 0.99


def test_welch_matches_a_known_value() -> None:
    # scipy.stats.ttest_ind([1, 2, 3, 4], [2, 3, 4, 5.5], equal_var=False).pvalue
    assert welch_p_value([1, 2, 3, 4], [2, 3, 4, 5.5]) == pytest.approx(0.2986, abs=1e-3)


def test_t_critical_matches_tables() -> None:
    # two-sided 1%: df 1, 10, 30, 120 and the normal limit
    want = [63.657, 3.169, 2.750, 2.617]
    assert t_critical(np.asarray([1.0, 10.0, 30.0, 120.0])) == pytest.approx(want, abs=2e-3)
    assert float(t_critical(1e9)) == pytest.approx(2.5758, abs=1e-3)
    assert float(t_critical(10.7)) == float(t_critical(10.0))  # rounded down: wider


def test_effective_size_of_ar1() -> None:
    assert float(effective_size(60, np.asarray(0.0))) == pytest.approx(60)
    # asymptotically n (1 - phi) / (1 + phi); the exact finite-n factor is a bit larger
    big = float(effective_size(100_000, np.asarray(0.5)))
    assert big == pytest.approx(100_000 / 3, rel=1e-3)
    assert 60 / 19 < float(effective_size(60, np.asarray(0.9))) < 60 / 10


def test_rate_change_verdicts_and_short() -> None:
    rng = np.random.default_rng(11)
    a = list(1000 * (1 + 0.02 * ar1(rng, 1, 60, 0.3)[0]))
    down = [v * 0.8 for v in a[::-1]]
    change = rate_change(a, down, center_pct=-20.0)
    assert change.verdict == REGRESSION and change.significant  # ops down: worse
    low, high = change.ci_pct
    assert low < -20 < high < 0
    assert math.log1p(low / 100) + math.log1p(high / 100) == pytest.approx(
        2 * math.log1p(-0.2))  # centred on the given figure (log scale)
    assert rate_change(a, a).verdict == NO_CHANGE
    short = rate_change(a[: MIN_SECONDS - 1], a)
    assert short.verdict == TOO_SHORT and short.ci_pct is None and not short.significant


def test_p99_interval_on_synthetic_histograms() -> None:
    """A/A at phi 0.5: no false change in (nearly) every pair; B 20% slower: the interval
    holds +20% and says regression in (nearly) every pair."""
    same = percentile_trials(0.5, 60, 1.0, seed=5)
    assert sum(v != NO_CHANGE for *_, v in same) <= 2
    slower = percentile_trials(0.5, 60, 1.2, seed=6)
    covered = sum(ci is not None and ci[0] <= true <= ci[1] for true, ci, _ in slower)
    assert covered >= 57
    assert sum(v == REGRESSION for *_, v in slower) >= 55


def test_p99_is_the_merged_histograms_percentile() -> None:
    """The estimate is the percentile of ALL latencies (merged), not a mean of per-second
    p99s: one second with a long tail moves it as the merged counts say."""
    rng = np.random.default_rng(2)
    a_idx, b_idx = histograms(rng, 30, 0.0), histograms(rng, 30, 0.0)
    a, b, values = counts_pair(a_idx, b_idx)
    change = percentile_change(SecondHists.from_dense(a, values),
                               SecondHists.from_dense(b, values))
    merged = np.cumsum(a.sum(axis=0))
    rank = max(int(0.99 * merged[-1] + 0.5), 1)
    p99_a = values[np.searchsorted(merged, rank)]
    per_second_mean = np.mean([values[np.searchsorted(np.cumsum(r), max(int(.99 * r.sum() + .5), 1))]
                               for r in a])
    est = percentile_estimate(SecondHists.from_dense(a, values), 99.0)
    assert est is not None and est[0] == p99_a != per_second_mean
    assert change.verdict in (NO_CHANGE, REGRESSION, "improvement")


def test_too_few_ops_beyond_p99_is_too_short() -> None:
    rng = np.random.default_rng(4)
    a, b, values = counts_pair(histograms(rng, 30, 0.0, per_second=20),
                               histograms(rng, 30, 0.0, per_second=20))
    change = percentile_change(SecondHists.from_dense(a, values),
                               SecondHists.from_dense(b, values))
    assert change.verdict == TOO_SHORT  # 600 ops: 6 beyond p99


def test_p99_with_a_drifting_median_and_a_sampled_tail() -> None:
    """Issue 32: the median drifts with memory (phi 0.9) while the ops beyond p99 (about
    0.5 a second) are per-second sampling noise. The median's memory is charged to the
    tail share's level variation only, not to its sampling noise: over 120 s a 100x
    slower tail is a regression in (nearly) every pair (the former method: too short to
    tell in most), and identical pairs are (nearly) never a change."""
    same = percentile_trials(0.9, 60, 1.0, 120, seed=21, drifting=True)
    assert sum(v not in (NO_CHANGE, TOO_SHORT) for *_, v in same) <= 1
    assert sum(v == TOO_SHORT for *_, v in same) <= 6
    much = percentile_trials(0.9, 60, 100.0, 120, seed=10, drifting=True)
    assert sum(v == REGRESSION for *_, v in much) >= 54


def test_sampling_noise_is_not_charged_the_medians_memory() -> None:
    """Where the tail share's variation is sampling noise, n_eff stays above the gate
    although the median's own share has strong memory (the former method gave ~3)."""
    rng = np.random.default_rng(12)
    a, _b, values = counts_pair(drifting_histograms(rng, 60), drifting_histograms(rng, 60))
    est = percentile_estimate(SecondHists.from_dense(a, values), 99.0)
    assert est is not None and est[2] > MIN_EFFECTIVE, est
    # a tail that moves with the level keeps its memory: fewer effective seconds
    level = np.repeat([0.0, 1.5, 0.0], 20)  # a 20-second bump, as in issue 32's run
    lat = np.exp(rng.normal(0.0, 0.5, (60, 50)) + level[:, None]) * 1000.0
    idx = np.searchsorted(hdr.HIGH_VALUES, lat.astype(np.int64))
    bumped, _, values = counts_pair(idx, idx)
    est_bump = percentile_estimate(SecondHists.from_dense(bumped, values), 99.0)
    assert est_bump is not None and est_bump[2] < MIN_EFFECTIVE, est_bump


def test_a_one_second_phase_is_too_short_without_warnings() -> None:
    rng = np.random.default_rng(13)
    a, b, values = counts_pair(histograms(rng, 1, 0.0), histograms(rng, 1, 0.0))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        change = percentile_change(SecondHists.from_dense(a, values),
                                   SecondHists.from_dense(b, values))
    assert change.verdict == TOO_SHORT
