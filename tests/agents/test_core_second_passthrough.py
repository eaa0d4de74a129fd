"""A second the Rust core measured alone goes out with the core's own encodings (issue 28:
one encoding of a sample from the core to the store): the interval line carries the
bytes the core harvested, base64'd and never decoded in the agent, with the figures the
decode-and-merge path gives; a second with more in it (a second harvest, a Python-path
value) is decoded and merged; a core from before ``lateness_max_us`` is decoded as
before. The store reads the passed-on form as it reads the merged one."""

from __future__ import annotations

import base64
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from loadtower.agents.measure import IntervalRecorder
from loadtower.protocol.hdr_encoding import decode, decode_v2, encode
from loadtower.store import StoreReader, StoreWriter
from loadtower.store.hdr import decode_many, dense

core = pytest.importorskip("loadtower_core", reason="the Rust core is not built (no cargo)")

WAIT_S = 20.0  # a bound on waiting for the core's stop, not a measured time


def _echo_samples(seconds: float = 1.2) -> list[tuple[int, str, dict[str, Any]]]:
    """What the core harvests of its echo schedule (open model, no database)."""
    c = core.Core()
    c.start_echo(2000.0, 0)
    try:
        time.sleep(seconds)
    finally:
        c.stop(WAIT_S)
    samples: list[tuple[int, str, dict[str, Any]]] = c.harvest(2**40, True)
    assert samples
    return samples


def _lines(samples: list[tuple[int, str, dict[str, Any]]], decoded: bool
           ) -> list[dict[str, Any]]:
    """The interval lines of the samples; `decoded`: as the decode-and-merge path makes
    them (a histogram made in each op's second before the core's sample goes in)."""
    rec = IntervalRecorder("a/0", "a")
    rec.phase = "run"
    for second, op, sample in samples:
        if decoded:
            _ = rec._bucket("run", second).stats(op).service
        rec.add_encoded("run", second, op, sample)
    return [dict(line) for line in rec.flush("run")]


def test_a_core_second_goes_out_as_the_core_encoded_it() -> None:
    samples = _echo_samples()
    lines, merged = _lines(samples, False), _lines(samples, True)
    assert [line["ts"] for line in lines] == [s for s, _op, _x in samples]
    for line, other, (_second, _op, sample) in zip(lines, merged, samples, strict=True):
        got, want = line["ops"]["echo"], other["ops"]["echo"]
        assert base64.b64decode(got["service_hist"]) == sample["service"]
        assert base64.b64decode(got["response_hist"]) == sample["response"]
        assert base64.b64decode(got["lateness_hist"]) == sample["lateness"]
        # the core's top is hdrh's get_max_value of the same histogram
        lateness = decode_v2(sample["lateness"])
        assert got["lateness_max_us"] == lateness.get_max_value() > 0
        assert lateness.get_total_count() == got["ops"] == sample["ops"]
        # the same figures as the decode-and-merge path (its own bytes, the same counts)
        keys = ("ops", "late", "errors", "lateness_max_us")
        assert {k: got[k] for k in keys} == {k: want[k] for k in keys}
        for key in ("service_hist", "response_hist", "lateness_hist"):
            no, idx, cnt = decode_many([got[key], want[key]])
            mat = dense(no, idx, cnt, 2)
            assert mat[0].sum() > 0 and np.array_equal(mat[0], mat[1]), key


def _sample(service: list[int], response: list[int], lateness: list[int] | None,
            old_core: bool = False) -> dict[str, Any]:
    sample: dict[str, Any] = {
        "ops": len(service), "late": 0, "errors": {}, "first": 100.1, "last": 100.8,
        "service": core.encode_values(service), "response": core.encode_values(response)}
    if old_core:  # a core before lateness_max_us: an empty lateness when none was sent
        sample["lateness"] = core.encode_values(lateness or [])
    elif lateness:
        sample["lateness"] = core.encode_values(lateness)
        sample["lateness_max_us"] = decode_v2(sample["lateness"]).get_max_value()
    return sample


def test_a_second_harvest_of_the_same_second_is_merged() -> None:
    rec = IntervalRecorder("a/0", "a")
    rec.add_encoded("run", 100, "read", _sample([10, 20], [10, 20], [5, 6]))
    rec.add_encoded("run", 100, "read", _sample([30], [3000], [900]))
    [line] = rec.flush("run")
    got = line["ops"]["read"]
    assert got["ops"] == 3
    assert decode(got["service_hist"]).get_total_count() == 3
    assert decode(got["response_hist"]).get_max_value() == decode_v2(
        core.encode_values([3000])).get_max_value()
    lateness = decode(got["lateness_hist"])
    assert lateness.get_total_count() == 3
    assert got["lateness_max_us"] == lateness.get_max_value()


def test_a_python_value_in_a_core_second_decodes_it_first() -> None:
    rec = IntervalRecorder("a/0", "a")
    rec.offset = 0.0  # wall clock = monotonic clock
    rec.add_encoded("run", 100, "read", _sample([10, 20], [10, 20], [5, 6]))
    rec.ok("run", "read", 100.2, 100.3, 100.5, False, open_model=True)  # 0.1 s late
    [line] = rec.flush("run")
    got = line["ops"]["read"]
    assert got["ops"] == 3
    assert decode(got["service_hist"]).get_total_count() == 3
    assert decode(got["lateness_hist"]).get_total_count() == 3
    assert got["lateness_max_us"] >= 100_000


def test_an_older_core_second_is_decoded_and_an_empty_lateness_left_out() -> None:
    rec = IntervalRecorder("a/0", "a")
    rec.add_encoded("run", 100, "read", _sample([10, 20], [10, 20], None, old_core=True))
    [line] = rec.flush("run")
    got = line["ops"]["read"]
    assert "lateness_hist" not in got and "lateness_max_us" not in got
    assert got["service_hist"] == encode(decode_v2(core.encode_values([10, 20])))


def test_the_store_keeps_the_same_figures_from_either_form(tmp_path: Path) -> None:
    samples = _echo_samples(0.6)
    summaries = []
    for decoded in (False, True):
        writer = StoreWriter(tmp_path / f"{decoded}.duckdb")
        run_id = writer.start_run("r", "r", "", "", {}, {}, {})
        for line in _lines(samples, decoded):
            writer.add_interval(run_id, line)
        writer.close()
        rows = StoreReader(tmp_path / f"{decoded}.duckdb").phase_summary(run_id)
        summaries.append([{k: v for k, v in row.items() if k != "run_id"} for row in rows])
    assert summaries[0] and summaries[0][0]["ops"] > 0
    assert summaries[0] == summaries[1]
