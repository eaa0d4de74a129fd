"""The dashboard's snapshot of a run phase's steerable load (live_feed): its model as
the plan stored it, then each change the operator made (rate_change / users_change
events), at the cursor; on a real store a real StoreWriter writes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from loadtower.store.live_feed import snapshot
from tests.tui.live_writer import LIVE_RUN, START, LiveRun


@pytest.fixture
def store(tmp_path: Path) -> Path:
    return tmp_path / "store.duckdb"


@pytest.fixture
def open_model(store: Path) -> Iterator[LiveRun]:
    run = LiveRun(store, model={"rate": 500})
    try:
        run.second(ops=500)
        yield run
    finally:
        run.close()


def test_a_run_phase_has_its_planned_rate_until_steered(
        store: Path, open_model: LiveRun) -> None:
    snap = snapshot(store, LIVE_RUN, None, 0)
    assert [p.steer for p in snap.phases] == [("rate", 500.0)]
    row = snap.steerable()
    assert row is not None and row.name == "steady"

    open_model.steered("rate", 500, 1000)
    open_model.second(ops=1000)
    open_model.steered("rate", 1000, 250.5)
    live = snapshot(store, LIVE_RUN, None, 0)
    assert live.phases[0].steer == ("rate", 250.5)  # the last change wins
    # a replay at the cursor: the level as it was then
    assert snapshot(store, LIVE_RUN, START, 0).phases[0].steer == ("rate", 500.0)
    assert snapshot(store, LIVE_RUN, START + 1, 0).phases[0].steer == ("rate", 1000.0)
    # the changes are notable events: drawn on the timeline, targets of [ and ]
    assert [kind for _ts, kind in live.markers].count("rate_change") == 2
    assert START + 1 in live.marks
    # and counted: a change back to an earlier level is one more, not the same state
    assert [snapshot(store, LIVE_RUN, at, 0).phases[0].steers
            for at in (START, START + 1, None)] == [0, 1, 2]
    open_model.steered("rate", 250.5, 1000)
    assert snapshot(store, LIVE_RUN, None, 0).phases[0].steers == 3


def test_a_change_stored_after_the_newest_second_counts_live(
        store: Path, open_model: LiveRun) -> None:
    open_model.steered("rate", 500, 800, at=START + 5.5)  # no second stored there yet
    assert snapshot(store, LIVE_RUN, None, 0).phases[0].steer == ("rate", 800.0)


def test_a_closed_model_steers_users_and_other_phases_none(store: Path) -> None:
    run = LiveRun(store, phase="load", kind="load")
    try:
        run.second(ops=10)
        assert snapshot(store, LIVE_RUN, None, 0).steerable() is None
        run.next_phase("steady", model={"users": 4})
        run.second(ops=100)
        run.steered("users", 4, 8)
        snap = snapshot(store, LIVE_RUN, None, 0)
        assert [p.steer for p in snap.phases] == [None, ("users", 8.0)]
        row = snap.steerable()
        assert row is not None and row.name == "steady"
        run.next_phase("cool", model={"rate": 100})
        run.steered("users", 8, 2)  # not this phase's model: its rate stays
        assert snapshot(store, LIVE_RUN, None, 0).phases[2].steer == ("rate", 100.0)
        run.end()
        ended = snapshot(store, LIVE_RUN, None, 0)
        assert ended.steerable() is None  # its phase has ended
    finally:
        run.close()


def test_a_phase_without_a_model_is_not_steerable(store: Path) -> None:
    run = LiveRun(store)  # a run phase whose params have neither rate nor users
    try:
        run.second(ops=10)
        snap = snapshot(store, LIVE_RUN, None, 0)
        assert snap.phases[0].steer is None and snap.steerable() is None
    finally:
        run.close()
