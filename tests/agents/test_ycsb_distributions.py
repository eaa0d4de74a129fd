"""The key distributions against what YCSB's generators draw, computed from YCSB's own
constants (not from the generators under test): the scrambled zipfian's hot-key shares,
fnvhash64, the latest and hotspot generators. Fixed seeds: every test is deterministic."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from loadtower.agents.workload.fnv import fnvhash64, fnvhash64_array
from loadtower.agents.workload.keys import chooser, zeta

# YCSB's constants, restated here (ZipfianGenerator, ScrambledZipfianGenerator, Utils).
THETA = 0.99
YCSB_ZETAN = 26.46902820178302
YCSB_ITEMS = 10_000_000_000 + 1  # ZipfianGenerator(0, ITEM_COUNT): max inclusive
OFFSET, PRIME = 0xCBF29CE484222325, 1099511628211
M64 = (1 << 64) - 1

SIGMAS = 4.5  # binomial standard errors allowed
TOP_RANKS = 2_000_000  # ranks whose key is computed exactly; the rest spread evenly


def java_fnvhash64(val: int) -> int:
    """Utils.fnvhash64 step by step in Java's signed long arithmetic."""

    def as_long(x: int) -> int:
        x &= M64
        return x - (1 << 64) if x >> 63 else x

    hashval = as_long(OFFSET)
    for _ in range(8):
        octet = val & 0xFF
        val = val >> 8  # arithmetic shift, as Java's >> on a long
        hashval = as_long(hashval ^ octet)
        hashval = as_long(hashval * PRIME)
    return hashval if hashval == -(1 << 63) else abs(hashval)  # Math.abs(Long.MIN_VALUE)


def byte_fnv_array(values: np.ndarray) -> np.ndarray:
    """The same hash over an array, byte by byte (this file's own, for expected shares)."""
    h = np.full(values.shape, OFFSET, dtype=np.uint64)
    data = values.astype("<i8").view(np.uint8).reshape(-1, 8)
    for i in range(8):
        h = (h ^ data[:, i].astype(np.uint64)) * np.uint64(PRIME)
    return np.abs(h.view(np.int64))


def rank_probabilities(count: int) -> np.ndarray:
    """P(the zipfian draw is rank k) for k < count, with YCSB's constants: u uniform in
    [0, 1); rank 0 for u*ZETAN < 1, rank 1 for u*ZETAN < 1 + 0.5^theta, else
    (long)(items * (eta*u - eta + 1)^alpha), which is >= k exactly when
    u >= 1 + ((k/items)^(1-theta) - 1) / eta."""
    zeta2 = 1 + 0.5**THETA
    eta = (1 - (2.0 / YCSB_ITEMS) ** (1 - THETA)) / (1 - zeta2 / YCSB_ZETAN)
    k = np.arange(count + 1, dtype=np.float64)
    starts = np.maximum(1 + ((k / YCSB_ITEMS) ** (1 - THETA) - 1) / eta, zeta2 / YCSB_ZETAN)
    p = np.diff(starts)
    p[0] = 1 / YCSB_ZETAN
    p[1] = (zeta2 - 1) / YCSB_ZETAN
    return p


def expected_key_shares(n: int) -> np.ndarray:
    """Each key's share of requests at n records: the top ranks mapped by fnvhash64 % n,
    the remaining mass (ranks >= TOP_RANKS, each tiny) spread evenly over the keys."""
    p = rank_probabilities(TOP_RANKS)
    keys = byte_fnv_array(np.arange(TOP_RANKS, dtype=np.int64)) % n
    return np.bincount(keys, weights=p, minlength=n) + (1.0 - p.sum()) / n


def sample(pick, draws: int, n: int) -> np.ndarray:
    return np.bincount(np.fromiter((pick() for _ in range(draws)), np.int64, draws), minlength=n)


def within(observed: int, draws: int, p: float) -> bool:
    return abs(observed / draws - p) <= SIGMAS * math.sqrt(p * (1 - p) / draws)


# ---- fnvhash64 ------------------------------------------------------------------------
def test_fnvhash64_known_values() -> None:
    """Values from the definition (also what a Java long computes for it)."""
    known = {
        0: 6284781860667377211,
        1: 8517097267634966620,
        2: 1820151046732198393,
        255: 8064062821143829734,
        256: 2056600594528442646,
        10_000_000_000: 1201321332300452516,
        -1: 8289690350564177859,
        2**63 - 1: 8289549613075766851,
        -(2**63): 6284922598155788219,
    }
    for value, hashed in known.items():
        assert java_fnvhash64(value) == hashed
        assert fnvhash64(value) == hashed
    assert fnvhash64_array(np.array(list(known), dtype=np.int64)).tolist() == list(known.values())


def test_fnvhash64_is_the_definition() -> None:
    rng = random.Random(11)
    values = [rng.getrandbits(64) - (1 << 63) for _ in range(3000)] + list(range(-300, 300))
    assert [fnvhash64(v) for v in values] == [java_fnvhash64(v) for v in values]
    assert fnvhash64_array(np.array(values, dtype=np.int64)).tolist() == [
        java_fnvhash64(v) for v in values
    ]


def _preimages_below_2_34(target: int) -> list[int]:
    """Every value v < 2**34 whose unsigned FNV-1a hash is target (meet in the middle:
    forward over the two low bytes, backward over the others with bytes 5..7 zero)."""
    inv = pow(PRIME, -1, 1 << 64)
    forward: dict[int, int] = {}
    for b0 in range(256):
        h1 = ((OFFSET ^ b0) * PRIME) & M64
        for b1 in range(256):
            forward[((h1 ^ b1) * PRIME) & M64] = b0 | b1 << 8
    h5 = (target * inv * inv * inv) & M64  # undo bytes 7, 6, 5 (all zero)
    found = []
    for b4 in range(4):
        h4 = ((h5 * inv) & M64) ^ b4
        for b3 in range(256):
            h3 = ((h4 * inv) & M64) ^ b3
            for b2 in range(256):
                low = forward.get(((h3 * inv) & M64) ^ b2)
                if low is not None:
                    found.append(low | b2 << 16 | b3 << 24 | b4 << 32)
    return found


def test_math_abs_edge_never_reached_by_zipfian_draws() -> None:
    """Math.abs leaves the hash 2**63 negative (a negative key in YCSB); no draw of the
    scrambled zipfian (0 .. 10**10 + 1 < 2**34) hashes to it, so `% n` is always >= 0."""
    assert _preimages_below_2_34(1 << 63) == []
    some = 9_876_543_210  # and it does find a value whose hash is the target
    unsigned = OFFSET
    for byte in some.to_bytes(8, "little"):
        unsigned = ((unsigned ^ byte) * PRIME) & M64
    assert _preimages_below_2_34(unsigned) == [some]


# ---- zeta -----------------------------------------------------------------------------
def test_zeta_reproduces_ycsbs_zetan_and_exact_sums() -> None:
    assert abs(zeta(10_000_000_000) / YCSB_ZETAN - 1) < 1e-10
    for n in (1, 2, 999, 1000, 1001, 54_321, 1_000_000):
        exact = math.fsum((1.0 / np.arange(1, n + 1, dtype=np.float64) ** THETA).tolist())
        assert abs(zeta(n) - exact) < 1e-12


# ---- scrambled zipfian ----------------------------------------------------------------
@pytest.mark.parametrize("n", [10_000, 100_000])
def test_zipfian_hot_keys_match_ycsb(n: int) -> None:
    expected = expected_key_shares(n)
    order = np.argsort(expected)[::-1]
    hottest, top10 = int(order[0]), order[:10]
    assert hottest == fnvhash64(0) % n  # rank 0's key
    assert 1 / YCSB_ZETAN <= expected[hottest] < 1 / YCSB_ZETAN + 0.001

    draws = 1_000_000
    counts = sample(chooser("zipfian", n, lambda: n - 1, random.Random(20260 + n)), draws, n)
    assert counts.sum() == draws  # every key in [0, n)
    assert int(np.argmax(counts)) == hottest
    assert within(int(counts[hottest]), draws, float(expected[hottest]))
    assert within(int(counts[top10].sum()), draws, float(expected[top10].sum()))


def test_zipfian_share_does_not_depend_on_record_count() -> None:
    """YCSB draws over 10^10 items whatever n is: the hottest key's share stays ~1/ZETAN
    (the draw over n that this replaced gave 9.8% at 10,000 and 6.5% at 1,000,000)."""
    draws = 400_000
    for n in (10_000, 1_000_000):
        pick = chooser("zipfian", n, lambda n=n: n - 1, random.Random(3))
        hot = fnvhash64(0) % n
        share = sum(pick() == hot for _ in range(draws))
        assert within(share, draws, 1 / YCSB_ZETAN + 1 / n)


# ---- latest -----------------------------------------------------------------------------
def test_latest_newest_key_is_hottest() -> None:
    """SkewedLatestGenerator over records 0..999 (latest 999): key 999 - r for a zipfian
    draw r over 999 items, so 999 gets 1/zeta(999), 998 gets 0.5^theta/zeta(999)."""
    n, draws = 1000, 300_000
    counts = sample(chooser("latest", n, lambda: n - 1, random.Random(5)), draws, n)
    zeta999 = sum(1.0 / i**THETA for i in range(1, 1000))
    assert int(np.argmax(counts)) == n - 1
    assert within(int(counts[n - 1]), draws, 1 / zeta999)
    assert within(int(counts[n - 2]), draws, 0.5**THETA / zeta999)
    assert counts[0] == 0  # latest - r with r < 999: YCSB never draws key 0 here
    newest = counts[994:][::-1]  # keys 999, 998, ..., 994
    assert (np.diff(newest) < 0).all()  # the newer, the hotter


def test_latest_follows_a_growing_insert_sequence() -> None:
    top = [999]
    pick = chooser("latest", 1000, lambda: top[0], random.Random(6))
    before = [pick() for _ in range(20_000)]
    top[0] = 4999
    after = np.bincount([pick() for _ in range(100_000)], minlength=5000)
    assert max(before) <= 999
    assert int(np.argmax(after)) == 4999 and after[1000:].sum() > after[:1000].sum()
    zeta4999 = sum(1.0 / i**THETA for i in range(1, 5000))
    assert within(int(after[4999]), 100_000, 1 / zeta4999)  # zetan follows the count


# ---- hotspot and uniform ----------------------------------------------------------------
def test_hotspot_op_fraction_hits_the_hot_set() -> None:
    n, draws = 1000, 200_000
    counts = sample(chooser("hotspot", n, lambda: n - 1, random.Random(7), 0.2, 0.8), draws, n)
    assert counts.sum() == draws
    assert within(int(counts[:200].sum()), draws, 0.8)
    for part, total in ((counts[:200], 0.8 * draws), (counts[200:], 0.2 * draws)):
        cell = total / len(part)  # uniform inside each set: chi-square near its dof
        chi2 = float(((part - cell) ** 2 / cell).sum())
        assert chi2 < len(part) + 6 * math.sqrt(2 * len(part))


def test_hotspot_hot_set_is_truncated_like_ycsb() -> None:
    counts = sample(chooser("hotspot", 10, lambda: 9, random.Random(8), 0.25, 0.9), 50_000, 10)
    assert within(int(counts[:2].sum()), 50_000, 0.9)  # (int)(10 * 0.25) = 2 hot keys
    whole = sample(chooser("hotspot", 10, lambda: 9, random.Random(8), 1.0, 0.9), 20_000, 10)
    assert whole.sum() == 20_000 and (whole > 0).all()  # no cold set: uniform, in range
    with pytest.raises(ValueError, match="hotspot_op_fraction"):
        chooser("hotspot", 10, lambda: 9, random.Random(8), 0.2, 1.5)


def test_uniform_stays_uniform() -> None:
    n, draws = 500, 200_000
    counts = sample(chooser("uniform", n, lambda: n - 1, random.Random(9)), draws, n)
    cell = draws / n
    assert float(((counts - cell) ** 2 / cell).sum()) < n + 6 * math.sqrt(2 * n)


@pytest.mark.parametrize("dist", ["uniform", "zipfian", "latest", "hotspot"])
def test_seeded_draws_repeat(dist: str) -> None:
    def run(seed: int) -> list[int]:
        pick = chooser(dist, 100_000, lambda: 99_999, random.Random(seed))
        return [pick() for _ in range(5000)]

    assert run(42) == run(42)
    assert run(42) != run(43)
