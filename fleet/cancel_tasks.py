"""Cancelling a run's helper tasks without waiting on them forever.

``task.cancel()`` then ``await task`` under ``suppress(BaseException)`` waits for as
long as the task takes to end, which is forever when something it awaits does not give
way to the cancel (a library that awaits a reply in its own cleanup); and it swallows a
cancel of the caller itself. :func:`cancel_and_wait` bounds that wait, lets the
caller's own cancel through, and retrieves the tasks' outcomes (no "exception was
never retrieved")."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Iterable
from typing import TypeVar

END_WITHIN_S = 5.0
T = TypeVar("T")


def _left_behind(task: asyncio.Future) -> None:
    """A task cancelled and not waited for: its outcome is retrieved when it ends."""
    task.add_done_callback(lambda t: t.cancelled() or t.exception())


async def bounded(aw: Awaitable[T], timeout: float | None) -> T:
    """``await aw`` for `timeout` seconds at most (None: no bound), then TimeoutError.

    Unlike ``asyncio.wait_for`` (Python 3.11), a time-out (or the caller's own cancel)
    does not then wait for `aw` to end after its cancel: an awaitable that does not give
    way (an SSH library waiting on a channel's close) is left cancelled, not waited on."""
    task = asyncio.ensure_future(aw)
    try:
        done, _ = await asyncio.wait({task}, timeout=timeout)
    except asyncio.CancelledError:
        task.cancel()
        _left_behind(task)
        raise
    if not done:
        task.cancel()
        _left_behind(task)
        raise TimeoutError
    return task.result()


async def wait_within(tasks: Iterable[asyncio.Future | None],
                      within: float = END_WITHIN_S) -> list[asyncio.Future]:
    """Wait up to `within` seconds for `tasks` to end, and retrieve the outcome of each
    that did (an error it ended with is not logged at exit); returns those still running."""
    given = [t for t in tasks if t is not None]
    pending = [t for t in given if not t.done()]
    still = (await asyncio.wait(pending, timeout=within))[1] if pending else set()
    for task in given:
        if task.done() and not task.cancelled():
            task.exception()
    return [t for t in pending if t in still]


async def cancel_and_wait(tasks: Iterable[asyncio.Future | None],
                          within: float = END_WITHIN_S) -> list[asyncio.Future]:
    """Cancel `tasks` and wait up to `within` seconds for them to end; returns those that
    did not (left cancelled, to end whenever they do)."""
    given = [t for t in tasks if t is not None]
    for task in given:
        task.cancel()  # a no-op on one already done
    return await wait_within(given, within)
