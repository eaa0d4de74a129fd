"""LiveStats keeps whole histograms only for its last HOT_S seconds (issue 28: before, a
136 KiB histogram per second, op and phase for the whole run, 4.4 GB an hour): older
seconds are frozen to their encoding, which loses nothing. Every figure read from a
bounded LiveStats equals the one an unbounded LiveStats gives over the same lines: a
phase's, a window's over frozen seconds, a frozen second's cells, a late line's."""

from __future__ import annotations

import random
from typing import Any

from loadtower.orchestrator.live_stats import LiveStats

from .phase_fixtures import interval_line

RUN_S = 1_500
HOT = 60


def _lines(seed: int = 7) -> list[dict[str, Any]]:
    """A 1,500 s run: two phases, two ops a second, latencies that drift and spike."""
    rng = random.Random(seed)
    lines = []
    for ts in range(1_000, 1_000 + RUN_S):
        phase = "steady" if ts < 1_900 else "spike"
        for op in ("read", "update"):
            latency = int(rng.lognormvariate(7.0, 0.6)) + (50_000 if ts % 97 == 0 else 0)
            lines.append(interval_line(ts, op, rng.randint(80, 120), latency,
                                       rng.randint(0, 2), phase))
    return lines


def _both(lines: list[dict[str, Any]]) -> tuple[LiveStats, LiveStats]:
    bounded, whole = LiveStats(hot_s=HOT), LiveStats(hot_s=10 * RUN_S)
    for line in lines:
        bounded.add(line)
        whole.add(line)
    return bounded, whole


def test_only_the_last_seconds_stay_whole() -> None:
    bounded, whole = _both(_lines())
    assert len(bounded.cells) <= 2 * (HOT + 1)
    assert len(bounded.frozen_cells) + len(bounded.cells) == 2 * RUN_S
    assert len(whole.frozen_cells) == 0 and len(whole.cells) == 2 * RUN_S
    frozen = sum(len(f.encoded) for f in bounded.frozen_cells.values())
    assert frozen < 2 * RUN_S * 2_000  # a few hundred bytes a cell, not 136 KiB


def test_every_figure_equals_the_unbounded_ones() -> None:
    bounded, whole = _both(_lines())
    for label in ("steady", "spike"):
        for op in (None, "read", "update"):
            assert bounded.phase(label, op) == whole.phase(label, op)
    for t0, t1 in ((1_000, 1_010), (1_400, 1_700), (1_000, 2_500), (2_480, 2_500)):
        assert bounded.window(t0, t1) == whole.window(t0, t1)
        assert bounded.window(t0, t1, phase="steady") == whole.window(t0, t1, phase="steady")
        assert bounded.window(t0, t1, op="read") == whole.window(t0, t1, op="read")
        assert bounded.ops_in("update", t0, t1) == whole.ops_in("update", t0, t1)
    for ts in (1_000, 1_500, 2_499):
        assert bounded.second_cells(ts) == whole.second_cells(ts)
    assert bounded.latest(2_500.5, span=10, phase="spike") == \
        whole.latest(2_500.5, span=10, phase="spike")


def test_a_late_line_for_a_frozen_second_counts_there() -> None:
    lines = _lines()
    late = interval_line(1_100, "read", 500, 90_000, 3, "steady")
    bounded, whole = _both([*lines, late])
    assert ("steady", 1_100, "read") in bounded.cells  # thawed by the late line
    assert bounded.window(1_100, 1_101) == whole.window(1_100, 1_101)
    assert bounded.window(1_100, 1_101, op="read") == whole.window(1_100, 1_101, op="read")
    assert bounded.phase("steady") == whole.phase("steady")
    assert bounded.second_cells(1_100) == whole.second_cells(1_100)
    # the thawed second is frozen again once the next new second comes
    bounded.add(interval_line(2_500, "read", 100, 1_000, 0, "spike"))
    assert ("steady", 1_100, "read") in bounded.frozen_cells


def test_seconds_past_keep_s_are_let_go_and_said() -> None:
    stats = LiveStats(hot_s=HOT, keep_s=600)
    for line in _lines():
        stats.add(line)
    newest = 1_000 + RUN_S - 1
    assert stats.kept_from == newest - 600
    kept = {ts for (_p, ts, _o) in stats.frozen_cells} | {ts for (_p, ts, _o) in stats.cells}
    assert min(kept) == newest - 600 and len(kept) == 601
    assert not stats.whole_from(1_000) and stats.whole_from(newest - 600)
    # a phase's own figures stay whole: they never came from the seconds
    whole = LiveStats(hot_s=10 * RUN_S)
    for line in _lines():
        whole.add(line)
    assert stats.phase("steady") == whole.phase("steady")
    assert stats.window(newest - 300, newest + 1) == whole.window(newest - 300, newest + 1)


def test_a_frozen_cells_histogram_is_freed_without_the_cycle_collector() -> None:
    import gc
    import weakref

    stats = LiveStats(hot_s=2)
    stats.add(interval_line(100, "read", 10, 1_000, 0, "p"))
    ref = weakref.ref(stats.cells[("p", 100, "read")].hist)
    gc.disable()
    try:
        stats.add(interval_line(110, "read", 10, 1_000, 0, "p"))  # freezes second 100
        assert ("p", 100, "read") in stats.frozen_cells
        assert ref() is None  # freed at once, not left for gc's oldest generation
    finally:
        gc.enable()
