"""The suite's turns on the machine (tests/conftest.py `turn`): under xdist a test marked
`alone` runs with no other test beside it, and one waiting for its turn goes before any
shared test that asks after it. Real lock files and real threads, each with its own open
file (flock locks belong to an open file, so threads behave as the workers' processes).
No timing: the order is forced by waiting on the locks' states and on events."""

from __future__ import annotations

import fcntl
import os
import threading
from collections.abc import Callable
from pathlib import Path

from tests.conftest import turn

WAIT_S = 30.0  # bound on every wait below (a broken lock fails, never hangs the suite)


def _held(path: Path) -> bool:
    """Whether another open file holds an exclusive or shared lock on `path`."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def _until(check: Callable[[], bool]) -> None:
    done = threading.Event()
    for _ in range(int(WAIT_S * 100)):
        if check():
            return
        done.wait(0.01)
    raise AssertionError("the lock never reached the state waited for")


def _in_turn(folder: Path, alone: bool, order: list[str], name: str,
             release: threading.Event, inside: threading.Event) -> threading.Thread:
    def body() -> None:
        with turn(folder, alone):
            order.append(name)
            inside.set()
            assert release.wait(WAIT_S)

    thread = threading.Thread(target=body, daemon=True)
    thread.start()
    return thread


def test_an_alone_turn_waits_for_the_shared_one_and_goes_before_a_later_shared_one(
        tmp_path: Path) -> None:
    order: list[str] = []
    go = {n: threading.Event() for n in ("first", "alone", "later")}
    inside = {n: threading.Event() for n in go}
    first = _in_turn(tmp_path, False, order, "first", go["first"], inside["first"])
    assert inside["first"].wait(WAIT_S)
    alone = _in_turn(tmp_path, True, order, "alone", go["alone"], inside["alone"])
    _until(lambda: _held(tmp_path / "turn-gate.lock"))  # the alone turn waits at the gate
    later = _in_turn(tmp_path, False, order, "later", go["later"], inside["later"])
    assert order == ["first"]  # the alone turn waits for the first, the later one for it
    go["first"].set()
    assert inside["alone"].wait(WAIT_S)
    assert order == ["first", "alone"]
    go["alone"].set()
    assert inside["later"].wait(WAIT_S)
    go["later"].set()
    for thread in (first, alone, later):
        thread.join(WAIT_S)
    assert order == ["first", "alone", "later"]


def test_shared_turns_run_together(tmp_path: Path) -> None:
    order: list[str] = []
    go = threading.Event()
    inside = [threading.Event(), threading.Event()]
    threads = [_in_turn(tmp_path, False, order, f"s{i}", go, inside[i]) for i in range(2)]
    for event in inside:
        assert event.wait(WAIT_S)  # both inside at once: neither waited for the other
    go.set()
    for thread in threads:
        thread.join(WAIT_S)
    assert sorted(order) == ["s0", "s1"]
