"""Histograms made for one line are freed at once, not left for the cyclic collector: an
hdrh histogram and its encoder refer to each other, so a dropped one (its counts, 68 KiB
and more) waits for the oldest generation's collection, which a long run reaches rarely.
Seen in a 1-hour run as the orchestrator's memory rising with every line that carried
lateness (the per-line check of the agents' lateness, and the rollups' per-second
lateness histograms once evicted: now rows of their dense counts, no histogram). With
the collector off, no histogram outlives these."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from types import SimpleNamespace

import numpy as np
import pytest
from hdrh.histogram import HdrHistogram

from loadtower.orchestrator.sinks import Sinks
from loadtower.protocol.hdr_encoding import encode, new_hist
from loadtower.store.hdr import COUNTS_LEN, release
from loadtower.store.rollups import EMPTY_HI, EMPTY_LO, LATENESS, Level


def _alive() -> int:
    return sum(isinstance(o, HdrHistogram) for o in gc.get_objects())


@pytest.fixture
def no_collector() -> Iterator[None]:
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _lateness_text(values: list[int]) -> str:
    hist = new_hist()
    for v in values:
        hist.record_value(v)
    text = encode(hist)
    release(hist)
    return text


def test_the_per_line_lateness_check_keeps_no_histogram(no_collector: None) -> None:
    quiet = _lateness_text([50, 80, 120])  # well under the warning's p99
    events: list[str] = []
    sinks = SimpleNamespace(
        _last_lateness_warning={}, event=lambda kind, text, **_: events.append(text)
    )
    line = {"ts": 1, "ops": {"read": {"lateness_hist": quiet}, "update": {"lateness_hist": quiet}}}
    before = _alive()
    for ts in range(200):
        Sinks._warn_lateness(sinks, {**line, "ts": ts}, "a/0")  # type: ignore[arg-type]
    assert _alive() == before and events == []
    # a late agent is still warned about (the figures are read before the release)
    late = _lateness_text([900_000] * 10)
    Sinks._warn_lateness(sinks, {"ts": 500, "ops": {"read": {"lateness_hist": late}}}, "a/1")  # type: ignore[arg-type]
    assert len(events) == 1 and "agent a/1" in events[0] and "p99" in events[0], events
    assert _alive() == before
    # a histogram that is not HDR V2 is left to the store to report: no warning, none kept
    Sinks._warn_lateness(sinks, {"ts": 600, "ops": {"read": {"lateness_hist": "bad"}}}, "a/2")  # type: ignore[arg-type]
    assert len(events) == 1 and _alive() == before


def test_an_evicted_rollup_key_frees_its_lateness_row(no_collector: None) -> None:
    """The rollups keep lateness as a kind of their dense count rows, no histogram per key;
    an evicted key's row is cleared for reuse, its lateness too."""
    level = Level("op_second")
    before = _alive()
    keys = [("run", ts, "p", "read") for ts in range(50)]
    counts = np.zeros(COUNTS_LEN, np.int64)
    counts[10] = 3
    for key in keys:
        level.add_dense(level.get(key), LATENESS, counts)
    rows = [level.accs[k].row for k in keys]
    assert level.counts[rows, LATENESS, 10].tolist() == [3] * len(keys)
    assert _alive() == before
    level.drop(keys)
    assert _alive() == before and not level.accs and not level.counts.any()
    assert (level.lo[rows] == EMPTY_LO).all() and (level.hi[rows] == EMPTY_HI).all()


def test_the_lateness_check_reads_p99_only_when_an_op_was_later_than_the_bound(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A line whose every op was sent within the bound (2 ms) makes no histogram: its p99
    cannot be above its latest op. One whose latest op was later is judged by its p99."""
    from loadtower.orchestrator import sinks as sinks_module

    made: list[int] = []
    real = sinks_module.new_hist
    monkeypatch.setattr(sinks_module, "new_hist", lambda: made.append(1) or real())
    events: list[str] = []
    sinks = SimpleNamespace(
        _last_lateness_warning={}, event=lambda kind, text, **_: events.append(text)
    )

    def check(ts: int, values: list[int]) -> None:
        line = {"ts": ts, "ops": {"read": {"lateness_hist": _lateness_text(values)}}}
        Sinks._warn_lateness(sinks, line, "a/0")  # type: ignore[arg-type]

    check(1, [100] * 99 + [1_990])  # every op within 2 ms (its latest 1.99 ms)
    assert made == [] and events == []
    check(2, [100] * 199 + [50_000])  # one op 50 ms late of 200: the p99 is 0.1 ms
    assert made == [1] and events == []
    check(3, [100] * 90 + [5_000] * 10)  # a tenth 5 ms late: the p99 is 5 ms
    assert made == [1, 1] and len(events) == 1 and "5.0 ms after" in events[0], events
