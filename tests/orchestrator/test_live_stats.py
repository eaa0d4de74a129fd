from __future__ import annotations

import random

from hdrh.histogram import HdrHistogram

from loadtower.orchestrator.live_stats import PENDING_MAX, LiveStats, new_histogram


def _line(agent: str, ts: int, op: str, values_us: list[int], errors: int = 0) -> dict:
    hist = new_histogram()
    for v in values_us:
        hist.record_value(v)
    return {
        "type": "interval",
        "agent": agent,
        "host": "h",
        "ts": ts,
        "phase": "p",
        "cpu_pct": 5.0,
        "ops": {
            op: {
                "ops": len(values_us) + errors,
                "errors": {"Timeout": errors} if errors else {},
                "late": 1,
                "service_hist": hist.encode().decode(),
                "response_hist": hist.encode().decode(),
            }
        },
    }


def test_window_merges_histograms_across_agents_and_seconds() -> None:
    rng = random.Random(7)
    stats = LiveStats()
    raw: list[int] = []
    for ts in range(100, 110):
        for agent in ("a/0", "a/1", "b/0"):
            scale = 1000 if agent != "b/0" else 20000  # one slow agent: averaging would hide it
            values = [int(rng.lognormvariate(0, 0.5) * scale) + 1 for _ in range(200)]
            raw += values
            stats.add(_line(agent, ts, "read", values, errors=2))
    window = stats.window(100, 110)
    raw.sort()
    expected = HdrHistogram(1, 60_000_000, 3)
    for v in raw:
        expected.record_value(v)
    assert window.ops == 10 * 3 * 202
    assert window.errors == 60
    assert window.late == 30
    assert window.p99_ms == expected.get_value_at_percentile(99) / 1000
    exact_p99 = raw[int(0.99 * len(raw)) - 1] / 1000
    assert abs(window.p99_ms - exact_p99) / exact_p99 < 0.01
    assert stats.window(100, 105, op="read").ops == 5 * 3 * 202
    assert stats.window(100, 110, op="update").ops == 0


def test_latest_uses_complete_seconds() -> None:
    stats = LiveStats()
    stats.add(_line("a/0", 50, "read", [1000] * 10))
    stats.add(_line("a/0", 51, "read", [1000] * 30))
    assert stats.latest(52.5, span=1).ops == 30
    assert stats.latest(52.5, span=2).ops == 40


def test_the_latest_seconds_of_a_phase_leave_out_another_phases_late_ops() -> None:
    """The progress line of phase `run` (and of a ramp's steps `ramp@40`) counts only
    that phase's ops, not a previous phase's backlog completing in the same seconds."""
    from tests.orchestrator.phase_fixtures import interval_line

    stats = LiveStats()
    for ts in range(100, 110):
        stats.add(interval_line(ts, "insert", 1000, 2000, 0, phase="load"))  # late load ops
        stats.add(interval_line(ts, "read", 50, 1000, 0, phase="run"))
        stats.add(interval_line(ts, "read", 7, 1000, 0, phase="ramp@40"))
    assert stats.latest(110, span=10).ops == 10 * 1057  # every phase's ops
    assert stats.latest(110, span=10, phase="run").ops == 500
    assert stats.latest(110, span=10, phase="ramp").ops == 70  # its steps
    assert stats.latest(110, span=10, phase="ru").ops == 0  # a prefix is not a phase


def test_histograms_wait_as_text_and_a_bad_one_is_left_out_alone() -> None:
    """A cell keeps its lines' histograms as the agents sent them and decodes them when it
    is read or PENDING_MAX of them wait (live_stats.PENDING_MAX): the same figures as
    one histogram of every value. A histogram that is not HDR is left out of the cell's
    (as the store leaves it out of its rollups), its line's counts kept, and the others
    of its batch still decoded."""
    rng = random.Random(3)
    stats = LiveStats()
    expected = HdrHistogram(1, 60_000_000, 3)
    lines = PENDING_MAX + 5  # one decode on the way, the rest when read
    for i in range(lines):
        values = [int(rng.lognormvariate(7, 1)) + 1 for _ in range(20)]
        for v in values:
            expected.record_value(v)
        stats.add(_line(f"a/{i}", 100, "read", values))
    cell = stats.cells[("p", 100, "read")]
    assert len(cell.texts) == 5  # the first PENDING_MAX decoded, these waiting
    bad = _line("bad/0", 100, "read", [5])
    bad["ops"]["read"]["response_hist"] = "not a histogram"
    stats.add(bad)
    window = stats.window(100, 101)
    assert window.ops == 20 * lines + 1
    assert window.p99_ms == expected.get_value_at_percentile(99) / 1000
    assert window.p50_ms == expected.get_value_at_percentile(50) / 1000
    assert not cell.texts and not cell.pending
