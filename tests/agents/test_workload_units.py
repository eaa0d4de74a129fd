"""Key distributions, op mixes and interval measurement, without a database."""

from __future__ import annotations

import random
from collections import Counter

from loadtower.agents.measure import IntervalRecorder
from loadtower.agents.workload.keys import OpMix, Zipfian, chooser
from loadtower.store.hdr import decode


def test_op_mix_follows_weights() -> None:
    mix = OpMix(
        {"read": 60, "insert": 10, "insert_batch": 10, "delete": 10, "delete_batch": 10},
        random.Random(7),
    )
    counts = Counter(mix.next() for _ in range(100_000))
    assert abs(counts["read"] / 100_000 - 0.6) < 0.01
    for op in ("insert", "insert_batch", "delete", "delete_batch"):
        assert abs(counts[op] / 100_000 - 0.1) < 0.01


def test_zipfian_is_skewed_and_in_range() -> None:
    z = Zipfian(10_000, rng=random.Random(1))
    draws = [z.next() for _ in range(50_000)]
    assert min(draws) >= 0 and max(draws) < 10_000
    counts = Counter(draws)
    assert counts[0] > counts[100] * 20  # item 0 is by far the hottest
    top_1pct = sum(c for k, c in counts.items() if k < 100)
    assert top_1pct / len(draws) > 0.4


def test_scrambled_zipfian_spreads_hot_keys() -> None:
    pick = chooser("zipfian", 10_000, lambda: 9_999, random.Random(2))
    counts = Counter(pick() for _ in range(50_000))
    hottest = [k for k, _ in counts.most_common(5)]
    assert max(hottest) > 100  # not the first keys: scrambled over the key space
    assert counts.most_common(1)[0][1] > 50_000 / 10_000 * 20


def test_hotspot_and_latest_and_uniform() -> None:
    rng = random.Random(3)
    hot = chooser("hotspot", 1000, lambda: 999, rng, hot_data=0.2, hot_ops=0.8)
    share = sum(hot() < 200 for _ in range(20_000)) / 20_000
    assert abs(share - 0.8) < 0.02
    latest = chooser("latest", 1000, lambda: 999, rng)
    assert sum(latest() > 900 for _ in range(10_000)) / 10_000 > 0.5
    uni = chooser("uniform", 1000, lambda: 999, rng)
    values = [uni() for _ in range(20_000)]
    assert min(values) >= 0 and max(values) <= 999
    assert abs(sum(v < 500 for v in values) / 20_000 - 0.5) < 0.02


def test_interval_line_carries_exact_histograms() -> None:
    rec = IntervalRecorder("a/0", "a")
    rec.offset = 1234.0  # wall clock = monotonic clock + 1234 s
    rec.phase = "run"
    for ms in (1, 2, 3, 4, 100):
        rec.ok("run", "read", intended=0.0, sent=0.5, done=0.5 + ms / 1000, late=ms == 100)
    rec.error("run", "read", "TimeoutError", late=False, intended=0.2, done=0.7)
    [line] = rec.finished(1235)
    read = line["ops"]["read"]
    assert line["ts"] == 1234 and line["phase"] == "run"
    assert line["span"] == [1234.0, 1234.7]  # earliest intended start, latest completion
    assert read["ops"] == 6 and read["errors"] == {"TimeoutError": 1} and read["late"] == 1
    service = decode(read["service_hist"])
    response = decode(read["response_hist"])
    assert service.get_total_count() == 5
    assert abs(service.get_max_value() - 100_000) <= 100  # µs, 3 significant digits
    assert abs(response.get_min_value() - 501_000) <= 501  # from the intended start
    assert rec.finished(1236) == []


def test_fnv64_is_ycsbs_fnvhash64() -> None:
    """The unrolled hash equals FNV-1a over the 8 little-endian bytes, byte by byte."""
    import random

    from loadtower.agents.workload.keys import FNV_OFFSET, FNV_PRIME, MASK64, fnv64

    def by_bytes(value: int) -> int:
        h = FNV_OFFSET
        for byte in value.to_bytes(8, "little", signed=value < 0):
            h = ((h ^ byte) * FNV_PRIME) & MASK64
        return h

    rng = random.Random(3)
    for value in [0, 1, 255, 256, 2**63 - 1, *(rng.getrandbits(63) for _ in range(1000))]:
        assert fnv64(value) == by_bytes(value)
