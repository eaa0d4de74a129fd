"""The acsylla path's native sender, the parts that need no database: HDR indexes in
hdrh's layout, the per-second record kernel and its harvest, error names, UUIDs."""

from __future__ import annotations

import ctypes
import uuid

import acsylla.errors
import numpy as np
import pytest

from loadtower.agents.cql import native_api as api
from loadtower.agents.cql import native_kernels as k
from loadtower.agents.cql.native_sender import RING_SECONDS, NativeSender, NativeSession
from loadtower.agents.measure import IntervalRecorder, new_hist
from loadtower.store.hdr import decode


def test_hdr_index_is_hdrh_layout() -> None:
    hist = new_hist()
    rng = np.random.default_rng(7)
    values = [1, 2, 1023, 1024, 2047, 2048, 2049, 4095, 4096, 60_000_000]
    values += [int(v) for v in rng.integers(1, 60_000_000, 2000)]
    for v in values:
        assert k.hdr_index(v) == hist.get_counts_array_index(v), v
    assert k.hdr_index(0) == hist.get_counts_array_index(1)  # clamped like clamp_us
    assert k.hdr_index(10**9) == hist.get_counts_array_index(60_000_000)


def _sender(first_second: int = 0) -> NativeSender:
    sender = NativeSender(NativeSession(), max_ops=4, hist_len=new_hist().counts_len,
                          max_in_flight=8, late_s=0.002)
    sender.harvested = first_second - 1  # not yet read: seconds from first_second on
    return sender


def test_record_and_harvest_one_second() -> None:
    second = 1_800_000_000
    sender = _sender(second)
    ctx = sender.ctx
    ctx[k.WALL_OFFSET] = 5 * 10**9  # wall clock = monotonic clock + 5 s
    base = (second - 5) * 10**9  # monotonic time at the start of that wall second
    expected_service, expected_response = new_hist(), new_hist()
    for i in range(1, 101):
        sent = base + i * 1_000_000
        done = sent + i * 10_000  # 10 us * i of service time
        k.record(ctx, 2, sent - 500_000, sent, done, i % 10 == 0, 0)
        expected_service.record_value(i * 10)
        expected_response.record_value(i * 10 + 500)
    read_timeout = (2 << 24) | 0x1200
    for _ in range(3):
        k.record(ctx, 2, base, base, base + 10**6, 0, read_timeout)
    k.record(ctx, 2, base, base, base + 10**6, 1, 14 | 1 << 24)  # lib: request timed out
    out = sender.harvest(second)
    assert [(s, op) for s, op, _ in out] == [(second, 2)]
    sample = out[0][2]
    assert sample["ops"] == 104 and sample["late"] == 11
    assert sample["errors"] == {"CassErrorServerReadTimeout": 3, "CassErrorLibRequestTimedOut": 1}

    # span: the earliest intended start (the errors': base) and the latest completion
    assert sample["first"] == second and sample["last"] == pytest.approx(second + 0.101, abs=1e-6)
    recorder = IntervalRecorder("a", "h")
    recorder.add_counts("run", second, "read", sample)
    [whole] = recorder.finished(second + 1)
    assert (whole["ts"], whole["phase"], whole["span"]) == (second, "run", [second, second + 0.101])
    line = whole["ops"]["read"]
    assert line["ops"] == 104 and line["late"] == 11
    for name, expected in (("service_hist", expected_service), ("response_hist", expected_response)):
        got = decode(line[name])
        assert got.get_total_count() == 100
        for p in (1, 50, 90, 99, 100):
            assert got.get_value_at_percentile(p) == expected.get_value_at_percentile(p)
    # the ring slot was cleared for its next turn
    assert not sender.stats[second % RING_SECONDS].any()
    assert not sender.counts[second % RING_SECONDS].any()
    assert sender.harvest(second + 1) == []


def test_a_stale_ring_slot_is_not_reported_as_a_later_second() -> None:
    sender = _sender()
    k.record(sender.ctx, 0, 0, 0, 1000, 0, 0)  # wall second 0
    assert sender.harvest(RING_SECONDS) == []  # the same ring slot, another second
    assert not sender.stats.any()


def test_more_error_classes_than_pairs_are_all_counted() -> None:
    sender = _sender()
    ctx = sender.ctx
    for code in range(1, k.ERR_PAIRS + 4):
        k.record(ctx, 1, 0, 0, 1000, 0, (1 << 24) | code)
    [(_s, _op, sample)] = sender.harvest(0)
    assert sum(sample["errors"].values()) == k.ERR_PAIRS + 3 == sample["ops"]


def test_error_names_are_acsyllas_class_names() -> None:
    codes = [(1 << 24) | c for c in range(1, 36)]
    codes += [(2 << 24) | c for c in (0x0000, 0x000A, 0x0100, 0x1000, 0x1001, 0x1002, 0x1003,
                                      0x1100, 0x1200, 0x1300, 0x1400, 0x1500, 0x2000, 0x2100,
                                      0x2200, 0x2300, 0x2400, 0x2500)]
    for code in codes:
        assert hasattr(acsylla.errors, api.error_name(code)), hex(code)
    assert api.error_name(0x7777) == "CassError0x007777"


@pytest.mark.parametrize("text", ["00000000-0000-0000-0000-000000000000",
                                  "123e4567-e89b-12d3-a456-426614174000",
                                  "ffffffff-ffff-4fff-bfff-ffffffffffff"])
def test_uuid_words_match_the_drivers_parser(text: str) -> None:
    lib = api.library()
    parsed = api.CassUuid()
    assert lib.cass_uuid_from_string(text.encode(), ctypes.byref(parsed)) == 0
    ours = api.cass_uuid(uuid.UUID(text))
    assert (ours.time_and_version, ours.clock_seq_and_node) == (
        parsed.time_and_version, parsed.clock_seq_and_node)


def test_a_refused_connect_names_the_host_and_leaves_nothing_open() -> None:
    session = NativeSession()
    with pytest.raises(api.NativeError, match=r"connecting to 127\.0\.9\.9:9042: CassErrorLib"):
        session.connect(["127.0.9.9"], 9042, "user", "secret", "LOCAL_ONE")
    assert session.session == 0 and session.cluster == 0
