"""The steering keys' steps and the rate prompt's answers (pure functions)."""

from __future__ import annotations

import pytest

from loadtower.tui.screens.steer_keys import amount, moved, step_rate
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
