"""The agents' histograms read from their base64 text in one compiled pass (hdr.py's
`_agents_batch`, hdr_kernels.decode_b64_sparse) give what the Python path gives, and
any batch the pass does not take still goes the Python path: other forms, and bad
histograms, which are named as before."""

from __future__ import annotations

import base64
import random

import numpy as np
import pytest
from hdrh.histogram import HdrHistogram

from loadtower.protocol.hdr_encoding import encode
from loadtower.store import hdr


def _hist(seed: int, n: int) -> HdrHistogram:
    rng = random.Random(seed)
    h = HdrHistogram(1, 60_000_000, 3)
    for _ in range(n):
        h.record_value(max(1, int(rng.lognormvariate(7.0, 2.0))))
    return h


def _python_path(encoded: list[str | None]) -> list[tuple[np.ndarray, np.ndarray]]:
    idx, cnt, off = hdr.decode_v2_batch([hdr.v2(e) if e else b"" for e in encoded])
    return [(idx[off[h] : off[h + 1]], cnt[off[h] : off[h + 1]]) for h in range(len(encoded))]


def _same(a: list[tuple[np.ndarray, np.ndarray]], b: list[tuple[np.ndarray, np.ndarray]]) -> None:
    assert len(a) == len(b)
    for (ia, ca), (ib, cb) in zip(a, b, strict=True):
        assert ia.tolist() == ib.tolist() and ca.tolist() == cb.tolist()


def test_a_batch_of_the_agents_form_is_read_in_the_compiled_pass_and_agrees() -> None:
    hists = [_hist(seed, n) for seed, n in enumerate((0, 1, 7, 500, 20_000, 3))]
    hists[2].record_value(59_000_000)  # the last bucket
    encoded: list[str | None] = [encode(h) for h in hists] + [None, ""]
    assert all(e.startswith(hdr.AGENTS_B64_PREFIX) for e in encoded if e)
    assert hdr._agents_batch(encoded) is not None  # the compiled pass took the batch
    got = hdr.sparse_counts(encoded)
    _same(got, _python_path(encoded))
    for h, (_index, count) in zip(hists, got, strict=False):
        assert int(count.sum()) == h.get_total_count()
    no, idx, cnt = hdr.decode_many(encoded)
    assert np.array_equal(np.bincount(no, cnt, len(encoded)).astype(np.int64),
                          [h.get_total_count() for h in hists] + [0, 0])  # fmt: skip


def test_other_forms_in_a_batch_go_the_python_path() -> None:
    h = _hist(9, 300)
    mixed: list[str | None] = [encode(h), h.encode().decode()]  # hdrh's compressed form too
    assert hdr._agents_batch(mixed) is None
    a, b = hdr.sparse_counts(mixed)
    assert a[0].tolist() == b[0].tolist() and a[1].tolist() == b[1].tolist()
    # a line break inside the text: base64's decoder skips it, the compiled pass refuses
    # the batch and the Python path reads it as it always has
    text = encode(h)
    broken = text[:40] + "\n" + text[40:]
    assert hdr._agents_batch([broken]) is None
    _same(hdr.sparse_counts([broken]), hdr.sparse_counts([text]))


@pytest.mark.parametrize(
    "mangle, reason",
    [
        (lambda raw: raw[:16] + (5).to_bytes(8, "big") + raw[24:], "unexpected range"),
        (lambda raw: raw[:-10], "truncated"),
        (lambda raw: raw + bytes([0x7F] * 40000), "not an HDR V2 histogram"),
    ],
)
def test_a_bad_histogram_in_a_batch_is_named_as_before(mangle, reason: str) -> None:  # noqa: ANN001
    good = encode(_hist(3, 50))
    raw = base64.b64decode(good)
    bad = mangle(raw)
    if reason == "not an HDR V2 histogram":  # its length says it has all those bytes
        bad = bad[:4] + (len(bad) - 40).to_bytes(4, "big") + bad[8:]
    text = base64.b64encode(bad).decode()
    assert text.startswith(hdr.AGENTS_B64_PREFIX)
    assert hdr._agents_batch([good, text]) is None
    with pytest.raises(ValueError, match=reason):
        hdr.sparse_counts([good, text])
