"""The Rust load core's pure parts (no database): key hashes as Python makes them, the
key distributions of a workload file's key generators (the core has no built-in ops: it
binds workload files only) of the same shape as Python's, its HDR encoding read by the
store and the agents as hdrh reads the same values, and the recorder's merge of its
samples."""

from __future__ import annotations

import base64
import random
from collections import Counter

import numpy as np
import pytest

from loadtower.agents.measure import IntervalRecorder, decode_v2
from loadtower.agents.workload.fnv import fnv64
from loadtower.agents.workload.keys import chooser
from loadtower.protocol.hdr_encoding import encode, new_hist
from loadtower.store.hdr import decode, decode_many, dense, dense_percentiles

core = pytest.importorskip("loadtower_core", reason="the Rust core is not built (no cargo)")

DRAWS = 200_000


def test_fnv64_parity_with_python() -> None:
    rng = random.Random(7)
    values = [0, 1, -1, 255, 256, 2**31, 2**32 - 1, 2**62, 2**63 - 1, -(2**63)]
    values += [rng.randrange(-(2**63), 2**63) for _ in range(20_000)]
    values += list(range(100_000))
    assert [core.fnv64(v) for v in values] == [fnv64(v) for v in values]


def _python_draws(distribution: str, records: int, seed: int) -> list[int]:
    pick = chooser(distribution, records, lambda: records - 1, random.Random(seed))
    return [pick() for _ in range(DRAWS)]


def _rank_shares(draws: list[int]) -> np.ndarray:
    """The share of draws of the 1st, 2nd, ... most drawn key (the shape, not the keys)."""
    return np.array(sorted(Counter(draws).values(), reverse=True), dtype=float) / len(draws)


@pytest.mark.parametrize("distribution", ["uniform", "zipfian", "latest", "hotspot"])
def test_distributions_have_python_shape(distribution: str) -> None:
    """`core.draws`: the binder's key source for `{gen = DISTRIBUTION, keys = 1000}`."""
    records = 1000
    rust = list(core.draws(distribution, records, DRAWS, 11))
    python = _python_draws(distribution, records, 11)
    assert min(rust) >= 0 and max(rust) < records
    r, p = _rank_shares(rust), _rank_shares(python)
    # the same rank-frequency profile: top key, top 1 %, top 10 %, top 50 % of keys
    for top in (1, 10, 100, 500):
        assert abs(r[:top].sum() - p[:top].sum()) < 0.02 + 0.05 * p[:top].sum(), (top, r, p)
    if distribution == "hotspot":  # the hot 20 % of keys take 80 % of draws
        assert abs(np.mean(np.array(rust) < 200) - 0.8) < 0.01
    if distribution == "latest":  # the newest key hottest, key 0 never
        assert Counter(rust).most_common(1)[0][0] == records - 1 and 0 not in rust


def test_unknown_distribution_is_one_line() -> None:
    with pytest.raises(ValueError, match="unknown key distribution 'pareto'"):
        core.draws("pareto", 10, 1, 1)


VALUES = [1, 2, 3, 17, 999, 1000, 1001, 2047, 2048, 4095, 12_345, 99_999, 250_000,
          1_000_000, 5_432_100, 59_999_999, 60_000_000]


def _hdrh(values: list[int]) -> object:
    hist = new_hist()
    for v in values:
        hist.record_value(v)
    return hist


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_hdr_v2_round_trip_matches_hdrh(seed: int) -> None:
    rng = random.Random(seed)
    values = VALUES + [int(rng.lognormvariate(8, 2)) % 60_000_000 + 1 for _ in range(5000)]
    raw = core.encode_values(values)
    expected = _hdrh(values)
    percentiles = (1.0, 25.0, 50.0, 90.0, 99.0, 99.9, 100.0)
    # the store: the agents' base64 form and the stored BLOB's varints both read it
    store = decode(base64.b64encode(raw).decode())
    agent = decode_v2(raw)
    for p in percentiles:
        want = expected.get_value_at_percentile(p)  # type: ignore[attr-defined]
        assert store.get_value_at_percentile(p) == want
        assert agent.get_value_at_percentile(p) == want
    no, idx, cnt = decode_many([base64.b64encode(raw).decode(), encode(expected)])  # type: ignore[arg-type]
    mat = dense(no, idx, cnt, 2)
    assert (mat[0] == mat[1]).all()
    got = dense_percentiles(mat, percentiles)
    assert np.array_equal(got[0], got[1])


def test_empty_histogram_encodes() -> None:
    assert decode_v2(core.encode_values([])).get_total_count() == 0
    assert decode(base64.b64encode(core.encode_values([])).decode()).get_total_count() == 0


def test_recorder_merges_core_samples_into_the_line() -> None:
    recorder = IntervalRecorder("a1", "h1")
    recorder.phase = "run"
    first = {"ops": 3, "late": 1, "errors": {"RequestTimeout": 1}, "first": 100.2,
             "last": 100.9, "service": core.encode_values([10, 20]),
             "response": core.encode_values([10, 2_000_000])}
    second = {"ops": 2, "late": 0, "errors": {}, "first": 100.0, "last": 100.5,
              "service": core.encode_values([30, 40]), "response": core.encode_values([30, 40])}
    recorder.add_encoded("run", 100, "read", first)
    recorder.add_encoded("run", 100, "read", second)
    (line,) = recorder.flush("run")
    sample = line["ops"]["read"]
    assert (sample["ops"], sample["late"], sample["errors"]) == (5, 1, {"RequestTimeout": 1})
    assert line["span"] == [100.0, 100.9]
    response = decode(sample["response_hist"])
    assert response.get_total_count() == 4
    assert response.get_value_at_percentile(100) == _hdrh([2_000_000]).get_max_value()  # type: ignore[attr-defined]


def test_recorder_refuses_other_encodings() -> None:
    with pytest.raises(ValueError, match="not an HDR V2 histogram"):
        decode_v2(b"nope" * 20)


def test_connect_failure_is_one_line() -> None:
    c = core.Core()
    with pytest.raises(ConnectionError, match=r"connecting to 127\.0\.0\.1:1: ") as info:
        c.connect(["127.0.0.1"], 1, None, None, "ONE", None, None, 1000, 1000)
    assert "\n" not in str(info.value)
