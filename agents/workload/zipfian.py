"""YCSB's zipfian generators: ``ZipfianGenerator`` and ``ScrambledZipfianGenerator``.

Both use the algorithm of Gray et al., "Quickly generating billion-record synthetic
databases" (SIGMOD 1994), as YCSB implements it: zipfian constant theta = 0.99,
zeta(2, theta), alpha = 1/(1-theta), eta = (1 - (2/items)^(1-theta)) / (1 - zeta2/zetan);
a uniform u in [0, 1) gives item 0 when u*zetan < 1, item 1 when u*zetan < 1 + 0.5^theta,
else (long)(items * (eta*u - eta + 1)^alpha). Item 0 is the hottest.

YCSB's ``requestdistribution=zipfian`` is the SCRAMBLED generator: whatever the record
count, it draws from that zipfian over ITEM_COUNT = 10^10 items (``ZipfianGenerator(0,
ITEM_COUNT)``: 10^10 + 1 items, max inclusive) with YCSB's precomputed ZETAN, and maps the
draw to fnvhash64(draw) mod the record count. Its hottest key therefore gets 1/ZETAN =
3.8% of the requests at any record count (plus whatever else hashes to it).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from functools import partial
from itertools import chain

import numpy as np

from loadtower.agents.workload.fnv import fnvhash64_array

ZIPF_THETA = 0.99  # YCSB's ZipfianGenerator.ZIPFIAN_CONSTANT
ITEM_COUNT = 10_000_000_000  # YCSB's ScrambledZipfianGenerator.ITEM_COUNT
ZETAN = 26.46902820178302  # YCSB's ScrambledZipfianGenerator.ZETAN: zeta(ITEM_COUNT, 0.99)
SCRAMBLED_ITEMS = ITEM_COUNT + 1  # ZipfianGenerator(0, ITEM_COUNT): min and max inclusive
BATCH = 1024  # scrambled draws computed at once (numpy), then handed out one by one

_HEAD = 1000  # zeta sums its first terms exactly, the rest by Euler-Maclaurin


def _head_sums(theta: float) -> list[float]:
    sums, acc = [0.0], 0.0
    for i in range(1, _HEAD + 1):
        acc += 1.0 / i**theta
        sums.append(acc)
    return sums


_HEAD_SUMS = {ZIPF_THETA: _head_sums(ZIPF_THETA)}


def zeta(n: int, theta: float = ZIPF_THETA) -> float:
    """sum(1 / i^theta for i in 1..n), YCSB's ``zetastatic(n, theta)``, in O(1): the first
    1000 terms exactly, the rest by Euler-Maclaurin to the f''' term (the error is below
    1e-15, smaller than the rounding of YCSB's own term-by-term sum)."""
    if theta not in _HEAD_SUMS:
        _HEAD_SUMS[theta] = _head_sums(theta)
    head = _HEAD_SUMS[theta]
    n = max(0, n)
    if n <= _HEAD:
        return head[n]
    a, b, s = float(_HEAD + 1), float(n), 1.0 - theta
    integral = (b**s - a**s) / s
    ends = (a**-theta + b**-theta) / 2
    d1 = -theta * (b ** (-theta - 1) - a ** (-theta - 1))  # f'(b) - f'(a)
    d3 = -theta * (theta + 1) * (theta + 2) * (b ** (-theta - 3) - a ** (-theta - 3))
    return head[_HEAD] + integral + ends + d1 / 12 - d3 / 720


def eta(items: int, zetan: float, theta: float = ZIPF_THETA) -> float:
    """Gray's eta; 0 when items <= 2 (then every draw is item 0 or 1 and eta is unused,
    where YCSB would compute 0/0)."""
    zeta2 = zeta(2, theta)
    if zetan <= zeta2:
        return 0.0
    return (1 - (2.0 / items) ** (1 - theta)) / (1 - zeta2 / zetan)


class Zipfian:
    """YCSB's ``ZipfianGenerator`` over items [0, n): item 0 hottest.

    ``next()`` is ``nextValue()``; ``next_of(count)`` is ``nextLong(count)`` for a count
    that changes (the latest distribution): like YCSB, a larger count updates zetan and
    eta, but eta keeps the item count the generator was made with, and a smaller count
    keeps the larger zetan."""

    def __init__(
        self,
        n: int,
        theta: float = ZIPF_THETA,
        rng: random.Random | None = None,
        zetan: float | None = None,
    ) -> None:
        self.n = max(1, n)
        self.theta = theta
        self.rng = rng or random.Random()
        self.zetan = zeta(self.n, theta) if zetan is None else zetan
        self.counted = self.n  # YCSB's countforzeta
        self.alpha = 1.0 / (1.0 - theta)
        self.eta = eta(self.n, self.zetan, theta)
        self.half_pow = 1 + 0.5**theta  # zeta(2, theta)

    def next(self) -> int:
        return self.next_of(self.n)

    def next_of(self, count: int) -> int:
        """A draw over `count` items (YCSB's nextLong(itemcount)): zetan follows a count
        that grew since the last draw, eta keeps the item count it was built with."""
        if count > self.counted:
            self.zetan = zeta(count, self.theta)
            self.counted = count
            self.eta = eta(self.n, self.zetan, self.theta)
        u = self.rng.random()
        uz = u * self.zetan
        if uz < 1.0:
            return 0
        if uz < self.half_pow:
            return 1
        return int(count * (self.eta * u - self.eta + 1) ** self.alpha)


def zipf_ranks(u: np.ndarray, items: int, zetan: float, theta: float = ZIPF_THETA) -> np.ndarray:
    """Gray's draw for every u of an array (int64): what ``Zipfian.next`` does per draw."""
    e, alpha = eta(items, zetan, theta), 1.0 / (1.0 - theta)
    ranks = (items * np.power(e * u - e + 1, alpha)).astype(np.int64)  # truncates, like (long)
    uz = u * zetan
    ranks[uz < 1 + 0.5**theta] = 1
    ranks[uz < 1.0] = 0
    return ranks


class ScrambledZipfian:
    """YCSB's ``ScrambledZipfianGenerator`` over [0, records): a zipfian draw over
    SCRAMBLED_ITEMS with ZETAN, then fnvhash64(draw) % records.

    Draws are made BATCH at a time with numpy (a generator seeded from ``rng``, so a
    seeded run repeats) and handed out by ``next()``, a C-level iterator step."""

    def __init__(self, records: int, rng: random.Random, batch: int = BATCH) -> None:
        self.records = max(1, records)
        self.batch = batch
        self._gen = np.random.Generator(np.random.PCG64(rng.getrandbits(64)))
        self.next: Callable[[], int] = partial(next, chain.from_iterable(iter(self._fill, None)))

    def _fill(self) -> list[int]:
        ranks = zipf_ranks(self._gen.random(self.batch), SCRAMBLED_ITEMS, ZETAN)
        return (fnvhash64_array(ranks) % self.records).tolist()
