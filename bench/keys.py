"""ns per key draw of each distribution, and the zipfian's hot-key shares, against the
pre-YCSB chooser (a zipfian over the record count hashed into [0, n), kept here as the
baseline), measured in one run.

    .venv/bin/python bench/keys.py [--draws 300000] [--share-draws 1000000]
"""

from __future__ import annotations

import argparse
import random
import time
from collections import Counter
from collections.abc import Callable

from loadtower.agents.workload.keys import Zipfian, chooser, fnv64

RECORDS = (10_000, 100_000, 1_000_000)


def old_zipfian(n: int, rng: random.Random) -> Callable[[], int]:
    """The chooser before: a zipfian over n items, then fnv64 mod n (not what YCSB does)."""
    z = Zipfian(n, rng=rng)
    nxt = z.next
    return lambda: fnv64(nxt()) % n


def ns_per_draw(pick: Callable[[], int], draws: int) -> float:
    for _ in range(min(draws, 10_000)):  # warm: first batch, caches
        pick()
    t0 = time.perf_counter_ns()
    for _ in range(draws):
        pick()
    return (time.perf_counter_ns() - t0) / draws


def shares(pick: Callable[[], int], draws: int) -> tuple[float, float]:
    top = Counter(pick() for _ in range(draws)).most_common(10)
    return top[0][1] / draws, sum(c for _, c in top) / draws


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--draws", type=int, default=300_000, help="draws per timing")
    ap.add_argument("--share-draws", type=int, default=1_000_000, help="draws per share")
    args = ap.parse_args()
    print(f"{'distribution':<14}{'records':>10}{'ns/draw':>10}{'x old zipf':>12}")
    for n in RECORDS:
        base = ns_per_draw(old_zipfian(n, random.Random(1)), args.draws)
        print(f"{'old zipfian':<14}{n:>10,}{base:>10.0f}{1.0:>12.2f}")
        for dist in ("zipfian", "latest", "hotspot", "uniform"):
            ns = ns_per_draw(chooser(dist, n, lambda n=n: n - 1, random.Random(1)), args.draws)
            print(f"{dist:<14}{n:>10,}{ns:>10.0f}{ns / base:>12.2f}")
    print(f"\n{'zipfian':<10}{'records':>10}{'hottest':>10}{'top 10':>10}")
    for n in RECORDS:
        for name, pick in (
            ("old", old_zipfian(n, random.Random(5))),
            ("ycsb", chooser("zipfian", n, lambda n=n: n - 1, random.Random(5))),
        ):
            hot, top10 = shares(pick, args.share_draws)
            print(f"{name:<10}{n:>10,}{hot:>10.2%}{top10:>10.2%}")


if __name__ == "__main__":
    main()
