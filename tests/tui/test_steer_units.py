"""The steering keys' steps, the rate prompt's answers (pure functions), and the level a
key starts from while the store lags behind the asks (AskSeries, on the screen's own
steer_level with snapshots as the store gives them)."""

from __future__ import annotations

import pytest

from loadtower.store.live_feed import PhaseRow, Snapshot
from loadtower.tui.screens.steer_keys import (
    AskSeries,
    SteerableScreen,
    amount,
    moved,
    step_rate,
)
from loadtower.tui.widgets.steer_prompt import parse_level


def test_a_rate_steps_along_the_series_both_ways() -> None:
    up = [500.0]
    for _ in range(6):
        up.append(step_rate(up[-1], True))
    assert up == [500, 600, 800, 1000, 1200, 1500, 2000]
    down = [2000.0]
    for _ in range(6):
        down.append(step_rate(down[-1], False))
    assert down == up[::-1]
    assert (step_rate(730, True), step_rate(730, False)) == (800, 600)  # between two steps
    assert (step_rate(1, False), step_rate(0.8, True)) == (0.8, 1)
    assert (step_rate(8000, True), step_rate(10_000, False)) == (10_000, 8000)
    assert step_rate(0.12, True) == 0.15 and step_rate(25_000, True) == 30_000


def test_moves_of_rate_and_users() -> None:
    assert moved("rate", 500, "double") == 1000 and moved("rate", 333, "half") == 166.5
    assert moved("users", 4, "up") == 5 and moved("users", 4, "down") == 3
    assert moved("users", 5, "half") == 2 and moved("users", 5, "double") == 10
    assert moved("users", 1, "down") == 1 and moved("users", 1, "half") == 1  # at least one


def test_amounts_read_as_the_run_writes_them() -> None:
    assert amount("rate", 1000) == "rate 1,000 ops/s"
    assert amount("rate", 250.5) == "rate 250.5 ops/s"
    assert amount("users", 8) == "8 users" and amount("users", 1) == "1 user"


@pytest.mark.parametrize(("kind", "answer", "value"), [
    ("rate", "1000", 1000.0), ("rate", " 1,500 ", 1500.0), ("rate", "2.5k", 2500.0),
    ("rate", "1M", 1e6), ("rate", "0.5", 0.5), ("rate", ".5", 0.5), ("rate", "10_000", 1e4),
    ("users", "8", 8.0), ("users", "1k", 1000.0),
    ("rate", "0", None), ("rate", "-5", None), ("rate", "fast", None), ("rate", "", None),
    ("rate", "1e3", None), ("rate", "nan", None), ("rate", "inf", None), ("rate", "5x", None),
    ("users", "2.5", None), ("users", "0", None),
])
def test_typed_levels(kind: str, answer: str, value: float | None) -> None:
    assert parse_level(kind, answer) == value


def _row(level: float, changes: int) -> PhaseRow:
    return PhaseRow(0, "steady", "run", 100.0, None, steer=("rate", level), steers=changes)


def _snap(level: float, changes: int) -> Snapshot:
    return Snapshot(run={"status": "running"}, cursor=110.0, first_ts=100.0, last_ts=110.0,
                    window=0, phases=[_row(level, changes)])


def _screen(level: float, changes: int) -> SteerableScreen:
    screen = SteerableScreen()
    screen.live = True
    screen.snap = _snap(level, changes)
    return screen


def test_a_stale_read_at_the_level_of_the_last_ask_does_not_end_the_series() -> None:
    """+ then - from 1,000: the store, behind, still shows the 1,000 stored before them;
    the key after must start from 1,000 (the last ask), also once the store shows the
    1,200 of the first ask, and the series ends only when the store has both."""
    screen = _screen(1000, 1)  # doubled once: 500 -> 1,000, stored
    screen._asked = AskSeries("steady", "rate", 1, ()).asked(_row(1000, 1), "rate", 1200)
    screen._asked = screen._asked.asked(_row(1000, 1), "rate", 1000)  # the store is behind
    assert screen.steer_level() == ("steady", "rate", 1000)  # stale 1,000: not caught up
    assert screen._asked is not None
    screen.snap = _snap(1200, 2)
    assert screen.steer_level() == ("steady", "rate", 1000)  # the first ask stored
    assert moved("rate", 1000, "half") == 500  # what `/` then asks, not 600
    screen.snap = _snap(1000, 3)
    assert screen.steer_level() == ("steady", "rate", 1000) and screen._asked is None


def test_a_refused_ask_is_not_waited_for() -> None:
    series = AskSeries("steady", "rate", 4, (1200.0, 1500.0))
    assert series.pending(_row(1200, 5))
    back = series.refused(1500)
    assert back == AskSeries("steady", "rate", 4, (1200.0,))
    assert not back.pending(_row(1200, 5))  # the store has the one ask left
    assert back.refused(1200) is None and back.refused(999) == back
    # a new series once the store has them all, or for another phase or kind
    assert back.asked(_row(1200, 5), "rate", 1500) == AskSeries("steady", "rate", 5, (1500.0,))
    other = PhaseRow(1, "next", "run", 200.0, None, steer=("users", 4), steers=0)
    assert series.asked(other, "users", 5) == AskSeries("next", "users", 0, (5.0,))
