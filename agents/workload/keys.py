"""Key choosers: YCSB's uniform, scrambled zipfian, latest and hotspot distributions.

A chooser returns a key NUMBER in [0, n); the schema turns numbers into keys (YCSB:
``user`` + FNV-1a 64 hash of the number, like YCSB's hashed insert order).
"""

from __future__ import annotations

import random
from collections.abc import Callable

FNV_OFFSET = 0xCBF29CE484222325
FNV_PRIME = 0x100000001B3
MASK64 = (1 << 64) - 1
ZIPF_THETA = 0.99  # YCSB's ZipfianGenerator.ZIPFIAN_CONSTANT


def fnv64(value: int) -> int:
    """YCSB's Utils.fnvhash64: FNV-1a over the 8 little-endian bytes of the value
    (unrolled: the agents hash every key they send)."""
    p, m = FNV_PRIME, MASK64
    h = ((FNV_OFFSET ^ (value & 0xFF)) * p) & m
    h = ((h ^ ((value >> 8) & 0xFF)) * p) & m
    h = ((h ^ ((value >> 16) & 0xFF)) * p) & m
    h = ((h ^ ((value >> 24) & 0xFF)) * p) & m
    h = ((h ^ ((value >> 32) & 0xFF)) * p) & m
    h = ((h ^ ((value >> 40) & 0xFF)) * p) & m
    h = ((h ^ ((value >> 48) & 0xFF)) * p) & m
    return ((h ^ ((value >> 56) & 0xFF)) * p) & m


def zeta(n: int, theta: float) -> float:
    if n <= 5_000_000:
        return sum(1.0 / (i**theta) for i in range(1, n + 1))
    # Euler-Maclaurin approximation for large n (exact head + integral tail).
    head = sum(1.0 / (i**theta) for i in range(1, 1001))
    a = 1000.5
    return head + ((n + 0.5) ** (1 - theta) - a ** (1 - theta)) / (1 - theta)


class Zipfian:
    """Gray et al.'s zipfian generator over [0, n), as in YCSB (theta 0.99): item 0 hottest."""

    def __init__(self, n: int, theta: float = ZIPF_THETA, rng: random.Random | None = None):
        self.n = max(1, n)
        self.theta = theta
        self.rng = rng or random.Random()
        self.zetan = zeta(self.n, theta)
        zeta2 = zeta(2, theta)
        self.alpha = 1.0 / (1.0 - theta)
        self.eta = (1 - (2.0 / self.n) ** (1 - theta)) / (1 - zeta2 / self.zetan)
        self.half_pow = 1 + 0.5**theta

    def next(self) -> int:
        u = self.rng.random()
        uz = u * self.zetan
        if uz < 1.0:
            return 0
        if uz < self.half_pow:
            return 1
        return min(self.n - 1, int(self.n * ((self.eta * u - self.eta + 1) ** self.alpha)))


def chooser(
    distribution: str,
    records: int,
    latest: Callable[[], int],
    rng: random.Random,
    hot_data: float = 0.2,
    hot_ops: float = 0.8,
) -> Callable[[], int]:
    """A function returning the next existing key number to read or update."""
    n = max(1, records)
    if distribution == "uniform":
        return lambda: rng.randrange(n)
    if distribution == "zipfian":
        z = Zipfian(n, rng=rng)
        return lambda: fnv64(z.next()) % n  # scrambled: hot items spread over the key space
    if distribution == "latest":
        z = Zipfian(n, rng=rng)

        def pick_latest() -> int:
            top = latest()
            return max(0, top - z.next())

        return pick_latest
    if distribution == "hotspot":
        hot = max(1, int(n * hot_data))

        def pick_hot() -> int:
            if rng.random() < hot_ops:
                return rng.randrange(hot)
            return hot + rng.randrange(max(1, n - hot))

        return pick_hot
    raise ValueError(f"unknown key distribution '{distribution}'")


def load_slice(start_key: int, records: int, worker: int, workers: int) -> tuple[int, int]:
    """[first, end) of the key numbers worker ``worker`` of ``workers`` inserts in a load
    phase of ``records`` keys from ``start_key``: contiguous slices that together cover
    ``start_key .. start_key + records - 1`` exactly once."""
    per_worker = -(-records // max(workers, 1))
    first = min(records, worker * per_worker)
    return start_key + first, start_key + min(records, first + per_worker)


class OpMix:
    """Weighted choice of op names (cumulative weights, one random() per pick)."""

    def __init__(self, mix: dict[str, float], rng: random.Random) -> None:
        items = [(op, float(w)) for op, w in mix.items() if w > 0]
        if not items:
            raise ValueError("the mix has no op with a positive weight")
        total = sum(w for _, w in items)
        self.ops = [op for op, _ in items]
        acc = 0.0
        self.cum: list[float] = []
        for _, w in items:
            acc += w / total
            self.cum.append(acc)
        self.cum[-1] = 1.0
        self.rng = rng

    def next(self) -> str:
        u = self.rng.random()
        for op, edge in zip(self.ops, self.cum, strict=True):
            if u < edge:
                return op
        return self.ops[-1]
