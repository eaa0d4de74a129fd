"""Key choosers: YCSB's uniform, scrambled zipfian, latest and hotspot distributions,
each drawn as YCSB's generator draws it (``zipfian.py``; docs/formats.md).

A chooser returns a key NUMBER in [0, n); the schema turns numbers into keys (YCSB:
``user`` + FNV-1a 64 hash of the number, like YCSB's hashed insert order).
"""

from __future__ import annotations

import random
from collections.abc import Callable

from loadtower.agents.workload.fnv import FNV_OFFSET, FNV_PRIME, MASK64, fnv64, fnvhash64
from loadtower.agents.workload.zipfian import ZIPF_THETA, ScrambledZipfian, Zipfian, zeta

__all__ = [
    "FNV_OFFSET", "FNV_PRIME", "MASK64", "ZIPF_THETA", "OpMix", "ScrambledZipfian", "Zipfian",
    "chooser", "fnv64", "fnvhash64", "hotspot", "latest_keys", "load_slice", "zeta",
]


def latest_keys(latest: Callable[[], int], rng: random.Random) -> Callable[[], int]:
    """YCSB's ``SkewedLatestGenerator``: latest - zipfian.nextLong(latest), where latest is
    the newest key (``lastValue`` of the insert sequence) and the zipfian was made over
    that many items: the newest key is the hottest, key 0 is never drawn (as in YCSB)."""
    z = Zipfian(latest(), rng=rng)

    def pick_latest() -> int:
        top = latest()
        return top - z.next_of(top)

    return pick_latest


def hotspot(n: int, hot_data: float, hot_ops: float, rng: random.Random) -> Callable[[], int]:
    """YCSB's ``HotspotIntegerGenerator`` over [0, n): the hot set is the first
    int(n * hot_data) keys; a draw is uniform in the hot set with probability hot_ops,
    else uniform in the rest. Where one set is empty (YCSB divides by zero there) every
    draw is uniform in the other."""
    for name, value in (("hotspot_data_fraction", hot_data), ("hotspot_op_fraction", hot_ops)):
        if not 0.0 <= value <= 1.0:
            raise ValueError(f"{name} must be in [0, 1], not {value}")
    hot = int(n * hot_data)
    cold = n - hot
    if hot == 0 or cold == 0:
        return lambda: rng.randrange(n)
    draw, uniform = rng.random, rng.randrange

    def pick_hot() -> int:
        if draw() < hot_ops:
            return uniform(hot)
        return hot + uniform(cold)

    return pick_hot


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
        return ScrambledZipfian(n, rng).next
    if distribution == "latest":
        return latest_keys(latest, rng)
    if distribution == "hotspot":
        return hotspot(n, hot_data, hot_ops, rng)
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
