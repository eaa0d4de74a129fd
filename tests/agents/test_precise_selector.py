"""agents/precise_selector.py and agents/lane_clock.py: the agent loop's timed waits end
on a timerfd, its readiness never reaches asyncio, sockets work as on the stock
selector, and where no timerfd can be had the default loop is used (issue 33)."""

from __future__ import annotations

import asyncio
import os
import selectors
import socket
import time

import pytest

from loadtower.agents import lane_clock, precise_selector
from loadtower.agents.precise_selector import PreciseEpollSelector


def test_a_timed_wait_returns_nothing_of_the_timer_and_never_early() -> None:
    sel = PreciseEpollSelector()
    try:
        for timeout in (0.0005, 0.002, 0.0105):
            start = time.monotonic()
            assert sel.select(timeout) == []  # the timer fired: not a key of the caller's
            assert time.monotonic() - start >= timeout
        assert sel.select(0) == []  # its expiry was read: a poll finds nothing left
    finally:
        sel.close()


def test_sockets_are_reported_as_by_the_stock_selector() -> None:
    sel = PreciseEpollSelector()
    a, b = socket.socketpair()
    try:
        sel.register(a, selectors.EVENT_READ, data="a")
        sel.register(b, selectors.EVENT_WRITE, data="b")
        ready = {key.data: mask for key, mask in sel.select(1.0)}
        assert ready == {"b": selectors.EVENT_WRITE}
        sel.unregister(b)
        b.send(b"x")
        ready = {key.data: mask for key, mask in sel.select(None)}
        assert ready == {"a": selectors.EVENT_READ}
    finally:
        sel.close()
        a.close()
        b.close()


def test_a_stale_expiry_is_cleared_by_the_next_timed_wait() -> None:
    sel = PreciseEpollSelector()
    a, b = socket.socketpair()
    try:
        sel.register(a, selectors.EVENT_READ)
        sel._set(0.0001)  # armed and left to fire unread
        time.sleep(0.01)
        b.send(b"x")
        assert [mask for _key, mask in sel.select(5.0)] == [selectors.EVENT_READ]
        a.recv(1)
        sel._set(0.0001)
        time.sleep(0.01)
        assert sel.select(0.05) == []  # re-armed: the wait ends at its own time, nothing ready
    finally:
        sel.close()
        a.close()
        b.close()


def test_close_closes_the_timer() -> None:
    sel = PreciseEpollSelector()
    timer = sel._timer
    os.fstat(timer)
    sel.close()
    with pytest.raises(OSError):
        os.fstat(timer)
    sel.close()  # twice is harmless


def test_the_loop_runs_timers_in_order_on_it() -> None:
    loop = precise_selector.new_event_loop()
    try:
        assert isinstance(loop._selector, PreciseEpollSelector)  # type: ignore[attr-defined]
        fired: list[int] = []
        for i, delay in enumerate((0.003, 0.001, 0.002)):
            loop.call_later(delay, fired.append, i)
        loop.run_until_complete(asyncio.sleep(0.01))
        assert fired == [1, 2, 0]
    finally:
        loop.close()


def test_without_a_timerfd_the_default_loop_and_no_spin(monkeypatch: pytest.MonkeyPatch) -> None:
    def refused() -> None:
        raise OSError("timerfd is Linux's")

    monkeypatch.setattr(precise_selector, "_libc", refused)
    monkeypatch.setattr(precise_selector, "PRECISE", True)
    monkeypatch.setattr(lane_clock, "_SPIN_SET", None)
    loop = precise_selector.new_event_loop()
    try:
        assert not isinstance(loop._selector, PreciseEpollSelector)  # type: ignore[attr-defined]
        assert precise_selector.PRECISE is False
        assert lane_clock.lane_spin(0.001) == 0.0
    finally:
        loop.close()


def test_the_lane_spin_is_a_tenth_of_the_interval_at_most_its_cap(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(precise_selector, "PRECISE", True)
    monkeypatch.setattr(lane_clock, "_SPIN_SET", None)
    assert lane_clock.lane_spin(0.01) == lane_clock.SPIN_MAX_S
    assert lane_clock.lane_spin(0.0001) == pytest.approx(0.00001)
    monkeypatch.setattr(lane_clock, "_SPIN_SET", "0")
    assert lane_clock.lane_spin(0.01) == 0.0  # the agent's override: off
    monkeypatch.setattr(lane_clock, "_SPIN_SET", "0.0005")
    assert lane_clock.lane_spin(0.01) == 0.0005


def test_wait_until_never_returns_before_its_time() -> None:
    loop = precise_selector.new_event_loop()
    try:
        for spin in (0.0, 0.0001, 0.01):
            t = time.monotonic() + 0.002
            loop.run_until_complete(lane_clock.wait_until(t, spin))
            assert time.monotonic() >= t
    finally:
        loop.close()
