"""The histogram codec: the agents' form, hdrh's form and the store's BLOB all decode to
the same counts; bad histograms are refused with a reason, never read out of bounds."""

from __future__ import annotations

import base64
import random

import numpy as np
import pytest
from hdrh.histogram import HdrHistogram

from loadtower.protocol.hdr_encoding import encode
from loadtower.store import hdr
from loadtower.store.hdr import decode
from loadtower.store.rollups import Rollups


def _hist(seed: int, n: int = 800) -> HdrHistogram:
    rng = random.Random(seed)
    h = HdrHistogram(1, 60_000_000, 3)
    for _ in range(n):
        h.record_value(max(1, int(rng.lognormvariate(7.0, 1.2))))
    h.record_value(59_000_000)  # a value in the last bucket
    return h


def _dense(encoded: str | bytes, b64: bool = True) -> np.ndarray:
    no, idx, cnt = hdr.decode_many([encoded], b64=b64)
    return hdr.dense(no, idx, cnt, 1)[0]


def test_all_three_forms_decode_to_the_same_counts() -> None:
    h = _hist(1)
    agents = _dense(encode(h))
    assert agents.sum() == h.get_total_count()
    assert np.array_equal(agents, _dense(h.encode().decode()))
    blob = hdr.stored(hdr.payload(encode(h)))
    assert blob[:4] == hdr.STORED_MAGIC
    assert np.array_equal(agents, _dense(blob, b64=False))
    back = HdrHistogram.decode(hdr.standard(blob))  # hdrh reads what export writes
    for p in (50, 90, 99, 99.9, 100):
        assert back.get_value_at_percentile(p) == h.get_value_at_percentile(p)


def test_agent_decode_matches_hdrh() -> None:
    h = _hist(2)
    d = decode(encode(h))
    assert d.get_total_count() == h.get_total_count()
    for p in (50, 99, 99.99):
        assert d.get_value_at_percentile(p) == h.get_value_at_percentile(p)


def test_rollup_percentiles_follow_hdrh() -> None:
    hists = [_hist(s) for s in range(4)]
    merged = HdrHistogram(1, 60_000_000, 3)
    for h in hists:
        merged.add(h)
    rollups = Rollups()
    lines = [
        {"agent": f"a{i}", "ts": 100, "phase": "run",
         "ops": {"read": {"ops": 801, "errors": {}, "late": 0,
                          "service_hist": encode(h), "response_hist": encode(h)}}}
        for i, h in enumerate(hists)
    ]  # fmt: skip
    table = rollups.ingest([("r", line) for line in lines])
    assert table is not None and table.num_rows == 4
    per_agent = table.column("p99_ms").to_pylist()
    assert per_agent == [h.get_value_at_percentile(99) / 1000 for h in hists]
    from loadtower.store.rollups import level_rows

    row = level_rows(rollups.seconds, [("r", 100, "run", "read")]).to_pylist()[0]
    for name, p in (("p50_ms", 50), ("p90_ms", 90), ("p99_ms", 99), ("p999_ms", 99.9)):
        assert row[name] == merged.get_value_at_percentile(p) / 1000
    assert row["max_ms"] == merged.get_max_value() / 1000
    assert np.array_equal(_dense(row["response_hist"], b64=False), _dense(merged.encode()))


@pytest.mark.parametrize(
    "mangle, reason",
    [
        (lambda raw: b"\x00\x00\x00\x00" + raw[4:], "bad cookie"),
        (lambda raw: raw[:16] + (5).to_bytes(8, "big") + raw[24:], "unexpected range"),
        (lambda raw: raw[:-10], "truncated"),
    ],
)
def test_bad_headers_are_refused(mangle, reason: str) -> None:  # noqa: ANN001
    raw = base64.b64decode(encode(_hist(3)))
    with pytest.raises(ValueError, match=reason):
        hdr.v2(base64.b64encode(mangle(raw)))


def test_a_histogram_past_the_last_bucket_is_left_out_not_written() -> None:
    raw = bytearray(base64.b64decode(encode(_hist(4, n=10))))
    payload = bytes(raw[40:]) + bytes([0x7F] * 200)  # more 1-bucket skips than buckets
    bad = bytes(raw[:4]) + len(payload).to_bytes(4, "big") + bytes(raw[8:40]) + payload
    good = encode(_hist(5, n=10))
    sample = {"ops": 10, "errors": {}, "late": 0}
    line = {"agent": "a", "ts": 7, "phase": "run", "ops": {
        "read": {**sample, "service_hist": good, "response_hist": base64.b64encode(bad).decode()},
        "update": {**sample, "service_hist": good, "response_hist": good}}}  # fmt: skip
    rollups = Rollups()
    table = rollups.ingest([("r", line)])
    assert table is not None and table.num_rows == 2
    assert [why for _, why in rollups.rejected] == [
        "agent 'a', second 7, op 'read': its response histogram is not HDR V2 over "
        "1..60e6 us and was left out"
    ]
    assert table.column("p99_ms").to_pylist()[0] is None  # no histogram: no percentiles


def test_a_line_that_is_not_an_interval_is_left_out_with_a_reason() -> None:
    rollups = Rollups()
    line = {"agent": "a", "ts": 7, "ops": {"read": {"ops": 1, "response_hist": "%%%"}}}
    assert rollups.ingest([("r", line)]) is None
    assert len(rollups.rejected) == 1 and "agent 'a', second 7" in rollups.rejected[0][1]


def test_a_bad_line_leaves_no_trace_among_good_ones() -> None:
    good = encode(_hist(6, n=20))
    sample = {"ops": 21, "errors": {"ReadTimeout": 1}, "late": 0}
    hists = {"service_hist": good, "response_hist": good}

    def line(agent: str, ts: int, update_hist: str = good) -> dict:
        return {"agent": agent, "ts": ts, "phase": "run", "ops": {
            "read": {**sample, **hists},
            "update": {**sample, "service_hist": good, "response_hist": update_hist}}}  # fmt: skip

    rollups = Rollups()
    # the bad line's first op is fine and its second second (8) appears nowhere else
    batch = [line("a", 7), line("b", 8, update_hist="not base64 !"), line("c", 7)]
    table = rollups.ingest([("r", x) for x in batch])
    assert table is not None and table.column("agent").to_pylist() == ["a", "a", "c", "c"]
    assert set(rollups.seconds.accs) == {("r", 7, "run", "read"), ("r", 7, "run", "update")}
    acc = rollups.seconds.accs[("r", 7, "run", "read")]
    assert (acc.ops, acc.errors) == (42, 2)
    assert rollups.seconds.counts[acc.row, 1].sum() == 2 * 21
    assert len(rollups.rejected) == 1 and "agent 'b', second 8" in rollups.rejected[0][1]


def test_the_writer_records_a_left_out_line_as_a_bad_sample_event(tmp_path) -> None:  # noqa: ANN001
    from loadtower.store import StoreReader, StoreWriter

    good = encode(_hist(7, n=20))
    sample = {"ops": 21, "errors": {}, "late": 0, "service_hist": good}
    with StoreWriter(tmp_path / "s.duckdb") as writer:
        run_id = writer.start_run("r", "s", None, None, {}, {}, {})
        for agent, resp in (("a1/0", good), ("a2/0", "%%%")):
            line = {"agent": agent, "ts": 100, "phase": "run",
                    "ops": {"read": {**sample, "response_hist": resp}}}  # fmt: skip
            writer.add_interval(run_id, line)
        writer.flush()
    reader = StoreReader(tmp_path / "s.duckdb")
    _, events = reader.sql(f"SELECT kind, message FROM events WHERE run_id = '{run_id}'")
    assert [kind for kind, _ in events] == ["bad_sample"]
    assert "agent 'a2/0', second 100" in events[0][1] and "not an HDR histogram" in events[0][1]
    _, rows = reader.sql(f"SELECT agent, ops FROM op_intervals WHERE run_id = '{run_id}'")
    assert rows == [("a1/0", 21)]


def test_something_that_is_not_a_line_at_all_is_left_out() -> None:
    rollups = Rollups()
    assert rollups.ingest([("r", ["not", "a", "dict"]), ("r", {"ts": "soon"})]) is None  # type: ignore[list-item]
    assert len(rollups.rejected) == 2


def test_added_sparse_counts_equal_hdrh_add_of_the_decoded_histograms() -> None:
    """add_counts (the live view's add, no histogram per payload) against hdrh's own add:
    the same counts, total, min, max and percentiles; empty and missing payloads add
    nothing."""
    parts = [_hist(seed, n) for seed, n in ((3, 50), (4, 1), (5, 800))]
    empty = HdrHistogram(1, 60_000_000, 3)
    encoded: list[str | None] = [encode(p) for p in parts] + [encode(empty), None]
    by_hdrh, by_counts = HdrHistogram(1, 60_000_000, 3), HdrHistogram(1, 60_000_000, 3)
    by_hdrh.record_value(17)  # both start from the same non-empty histogram
    by_counts.record_value(17)
    for text in encoded[:3]:
        by_hdrh.add(decode(text))  # type: ignore[arg-type]
    sparse = hdr.sparse_counts(encoded)
    assert [i.size for i, _c in sparse[3:]] == [0, 0]
    for index, count in sparse:
        hdr.add_counts(by_counts, index, count)
    # all at once (the rollups' lateness: many lines into one accumulator): the same
    at_once = HdrHistogram(1, 60_000_000, 3)
    at_once.record_value(17)
    hdr.add_many_counts(at_once, sparse)
    for hist in (by_counts, at_once):
        assert list(hist.counts) == list(by_hdrh.counts)
        assert hist.get_total_count() == by_hdrh.get_total_count() == 855  # 17 too
        assert hist.get_min_value() == by_hdrh.get_min_value()
        assert hist.get_max_value() == by_hdrh.get_max_value()
        for p in (50.0, 99.0, 99.9, 100.0):
            assert hist.get_value_at_percentile(p) == by_hdrh.get_value_at_percentile(p)
