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


async def cancel_and_wait(tasks: Iterable[asyncio.Future | None],
                          within: float = END_WITHIN_S) -> list[asyncio.Future]:
    """Cancel `tasks` and wait up to `within` seconds for them to end; returns those that
    did not (left cancelled, to end whenever they do)."""
    given = [t for t in tasks if t is not None]
    pending = [t for t in given if not t.done()]
    done_already = [t for t in given if t.done()]
    for task in pending:
        task.cancel()
    if pending:
        _done, still = await asyncio.wait(pending, timeout=within)
    else:
        still = set()
    for task in [*done_already, *pending]:
        if task.done() and not task.cancelled():
            task.exception()  # retrieved: an error it ended with is not logged at exit
    return [t for t in pending if t in still]
