"""An epoll selector whose timeouts end on time, for the agent's asyncio loop.

asyncio sleeps by giving its selector a timeout, and epoll takes timeouts in whole
milliseconds, rounded up: an open-model lane that sleeps until an op's intended start
woke up to 1 ms after it (lateness p50 ~0.65 ms at 1,000 ops/s; docs/agent-protocol.md,
"Sending on time"). Here each wait with a timeout arms a timerfd (CLOCK_MONOTONIC, the
clock of asyncio's `loop.time()`, nanosecond resolution, no timer slack) that sits in
the same epoll set, so the wait ends when the timeout does; epoll's own millisecond
timeout stays as a backstop a millisecond after it. Nothing spins: the CPU cost is one
`timerfd_settime` per wait.

Linux only (timerfd through libc, as Python 3.11 has no `os.timerfd_create`):
`new_event_loop()` gives asyncio's default loop anywhere this cannot be set up, and says
which it gave in `PRECISE`.
"""

from __future__ import annotations

import asyncio
import ctypes
import math
import os
import select
import selectors
import sys
from typing import Any

CLOCK_MONOTONIC = 1  # <linux/time.h>
BACKSTOP_S = 0.001  # epoll's own timeout, this long after the timer's (it should never be needed)


class _Timespec(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]


class _Itimerspec(ctypes.Structure):
    _fields_ = [("it_interval", _Timespec), ("it_value", _Timespec)]


def _libc() -> Any:
    if not sys.platform.startswith("linux"):
        raise OSError("timerfd is Linux's")
    libc = ctypes.CDLL(None, use_errno=True)
    libc.timerfd_create.argtypes = [ctypes.c_int, ctypes.c_int]
    libc.timerfd_create.restype = ctypes.c_int
    libc.timerfd_settime.argtypes = [ctypes.c_int, ctypes.c_int,
                                     ctypes.POINTER(_Itimerspec), ctypes.c_void_p]  # fmt: skip
    libc.timerfd_settime.restype = ctypes.c_int
    return libc


class PreciseEpollSelector(selectors.EpollSelector):
    """selectors.EpollSelector with a timerfd in its epoll set that ends each timed wait
    (module docstring). The timer's own readiness never reaches the caller."""

    def __init__(self) -> None:
        super().__init__()
        self._libc = _libc()
        timer = self._libc.timerfd_create(CLOCK_MONOTONIC, os.O_NONBLOCK | os.O_CLOEXEC)
        if timer < 0:
            super().close()
            raise OSError(ctypes.get_errno(), "timerfd_create failed")
        self._timer = timer
        self._spec = _Itimerspec()
        self._armed = False
        try:
            self._selector.register(timer, select.EPOLLIN)  # type: ignore[attr-defined]
        except OSError:
            self.close()
            raise

    def _set(self, seconds: float) -> None:
        """Arm the timer `seconds` from now (0: disarm). Arming also clears an expiry
        that was not read, so a stale one never ends the next wait."""
        whole = int(seconds)
        self._spec.it_value.tv_sec = whole
        self._spec.it_value.tv_nsec = int((seconds - whole) * 1e9)
        if self._libc.timerfd_settime(self._timer, 0, ctypes.byref(self._spec), None) != 0:
            raise OSError(ctypes.get_errno(), "timerfd_settime failed")
        self._armed = seconds > 0

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        if timeout is None:
            if self._armed:
                self._set(0)
            wait = -1.0
        elif timeout <= 0:
            wait = 0.0  # a poll: the timer is left as it is (its expiry is drained below)
        else:
            self._set(max(timeout, 1e-9))
            wait = math.ceil(timeout * 1e3) * 1e-3 + BACKSTOP_S
        ready: list[tuple[selectors.SelectorKey, int]] = []
        keys: dict[int, selectors.SelectorKey] = self._fd_to_key  # type: ignore[attr-defined]
        try:
            events = self._selector.poll(wait, len(keys) + 1)  # type: ignore[attr-defined]
        except InterruptedError:
            return ready
        for fd, event in events:
            if fd == self._timer:
                self._drain()
                continue
            key = keys.get(fd)
            if key is None:
                continue
            mask = 0
            if event & ~select.EPOLLIN:
                mask |= selectors.EVENT_WRITE
            if event & ~select.EPOLLOUT:
                mask |= selectors.EVENT_READ
            ready.append((key, mask & key.events))
        return ready

    def _drain(self) -> None:
        self._armed = False  # one-shot: it fired
        try:
            os.read(self._timer, 8)
        except BlockingIOError:
            pass

    def close(self) -> None:
        timer = getattr(self, "_timer", -1)
        self._timer = -1
        super().close()
        if timer >= 0:
            os.close(timer)


PRECISE = True  # False once new_event_loop() had to fall back (for the bench and docs)


def new_event_loop() -> asyncio.AbstractEventLoop:
    """An asyncio loop on PreciseEpollSelector, or asyncio's default loop where a timerfd
    cannot be had (not Linux, no libc symbol, a sandbox that refuses the call)."""
    global PRECISE
    try:
        return asyncio.SelectorEventLoop(PreciseEpollSelector())
    except (OSError, AttributeError):
        PRECISE = False
        return asyncio.new_event_loop()
