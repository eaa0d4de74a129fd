"""The Rust core called from several Python threads at once, with no database (the echo
hook, ``Core.start_echo``). A stop waits for its ops with the GIL released, on
``asyncio.to_thread`` in the agent (RustFeed._watch), while the engine's loop thread
reads the core: ``in_flight`` at the start of a drain, ``harvest`` every second. With
``&mut self`` methods PyO3 refused those reads ("RuntimeError: Already mutably
borrowed"), which failed the drain and then the next phase's configure ("load workers
could not prepare the phase"). Every interleaving here must end with no error, and every
thread must come back (no call waits forever). No timing is asserted."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from loadtower.agents.measure import IntervalRecorder
from loadtower.engines.cassandra.agent.rust_feed import RustFeed

core = pytest.importorskip("loadtower_core", reason="the Rust core is not built (no cargo)")

ROUNDS = 8
JOIN_S = 60.0  # a bound on waiting for a thread, not a measured time
# each echo send holds the core's only worker 3 ms: at 1,000 ops/s the ops pile up, so a
# stop always has ops in flight to wait for (until its timeout) with the GIL released
RATE, HOLD_US = 1000.0, 3000
STOP_S = 0.05


def _reads(c: Any) -> None:
    """What the agent's loop thread reads while a phase ends (Engine._drain, _tick)."""
    c.in_flight()
    c.counts()
    c.harvest(int(time.time()) - 1, False)
    c.path()
    c.load_done()
    c.load_failed()


def _in_thread(target: Callable[[], None], errors: list[BaseException]) -> threading.Thread:
    def run() -> None:
        try:
            target()
        except BaseException as exc:  # noqa: BLE001 - the test reports it
            errors.append(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def _joined(*threads: threading.Thread) -> None:
    for thread in threads:
        thread.join(JOIN_S)
        assert not thread.is_alive(), "a core call never came back"


def test_reads_while_a_stop_waits_for_its_ops() -> None:
    c = core.Core()
    errors: list[BaseException] = []
    reads = 0
    try:
        for _ in range(ROUNDS):
            c.start_echo(RATE, HOLD_US)
            while c.in_flight() == 0:  # ops wait for the worker: the stop will wait too
                time.sleep(0.005)
            stopper = _in_thread(lambda: c.stop(STOP_S), errors)
            while stopper.is_alive():
                try:
                    _reads(c)
                    reads += 1
                except RuntimeError as exc:
                    errors.append(exc)
                    break
            _joined(stopper)
    finally:
        c.close()
    assert not errors, errors
    assert reads > 0
    intended, counted = c.counts()
    assert 0 < counted <= intended


def test_starts_stops_and_reads_from_three_threads() -> None:
    c = core.Core()
    errors: list[BaseException] = []

    def starter() -> None:  # the only thread that starts: each start follows a stop
        for _ in range(ROUNDS):
            c.start_echo(RATE, HOLD_US)
            time.sleep(0.02)
            c.stop(STOP_S)

    def stopper() -> None:  # a stop from elsewhere (a drain) may come at any moment
        for _ in range(ROUNDS):
            c.stop(STOP_S)
            _reads(c)

    threads = [_in_thread(starter, errors), _in_thread(stopper, errors)]
    try:
        while any(t.is_alive() for t in threads) and not errors:
            try:
                _reads(c)
            except RuntimeError as exc:
                errors.append(exc)
        _joined(*threads)
    finally:
        c.close()
    assert not errors, errors
    assert c.in_flight() == 0


def test_a_feed_drains_while_its_stop_runs_on_a_thread() -> None:
    """The agent's own sequence: the lanes leave (a Locust stop), the feed's watcher stops
    the core on a thread; the master's stop drains meanwhile, reading the ops in flight
    and harvesting on the loop."""
    out: list[Any] = []
    warnings: list[str] = []

    async def phase_end() -> list[dict[str, int]]:
        feed = RustFeed(IntervalRecorder("agent1/0", "agent1"), warnings.append, out.append)
        feed.phase = "run"
        feed.core = core.Core()
        counts: list[dict[str, int]] = []
        try:
            for _ in range(ROUNDS):
                stopped = asyncio.Event()
                feed.lanes, feed.stop_timeout = 0, STOP_S  # (a drain sets it back)
                feed._join(lambda: feed.core.start_echo(RATE, HOLD_US), lambda: None)
                while feed.core.in_flight() == 0:
                    await asyncio.sleep(0.005)
                stopped.set()
                feed._leave(lambda: None)  # the last lane left: the watcher stops the core
                assert feed._task is not None
                while not feed._task.done():  # Engine._drain and _tick meanwhile
                    feed.in_flight()
                    feed.harvest(int(time.time()) - 1)
                    await asyncio.sleep(0)
                abandoned = await feed.drain(time.monotonic() + STOP_S)
                assert feed.phase_counts is not None
                assert feed.phase_counts["abandoned"] == abandoned
                counts.append(feed.phase_counts)
        finally:
            await feed.close()
        return counts

    counts = asyncio.run(phase_end())
    # every op each stop saw is counted or given up, once: none lost to a refused read
    assert all(c["intended"] == c["counted"] + c["abandoned"] > 0 for c in counts), counts
    assert not warnings
