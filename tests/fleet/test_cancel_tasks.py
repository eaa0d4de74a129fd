"""The run's helper tasks are cancelled with a bounded wait: one that does not give way
to its cancel no longer holds the run's end forever, the caller's own cancel gets
through, and an error a task ended with is retrieved."""

from __future__ import annotations

import asyncio
import contextlib

import pytest

from loadtower.fleet.cancel_tasks import bounded, cancel_and_wait


async def _stubborn(release: asyncio.Event) -> None:
    """Swallows every cancel until released, as a library's cleanup may."""
    while not release.is_set():
        with contextlib.suppress(asyncio.CancelledError):
            await release.wait()


async def _fails() -> None:
    raise RuntimeError("boom")


def test_a_task_that_ignores_its_cancel_is_left_behind_not_waited_for() -> None:
    async def main() -> tuple[list, bool, bool]:
        release = asyncio.Event()
        stubborn = asyncio.create_task(_stubborn(release))
        plain = asyncio.create_task(asyncio.sleep(3600))
        failed = asyncio.create_task(_fails())
        await asyncio.sleep(0)
        left = await cancel_and_wait([stubborn, plain, None, failed], within=0.2)
        release.set()
        await stubborn
        return left, plain.cancelled(), stubborn in left

    left, plain_cancelled, stubborn_left = asyncio.run(main())
    assert stubborn_left and len(left) == 1 and plain_cancelled


def test_the_callers_own_cancel_gets_through() -> None:
    async def main() -> None:
        release = asyncio.Event()
        stubborn = asyncio.create_task(_stubborn(release))
        await asyncio.sleep(0)
        closing = asyncio.create_task(cancel_and_wait([stubborn], within=3600))
        await asyncio.sleep(0.01)
        closing.cancel()
        with pytest.raises(asyncio.CancelledError):
            await closing
        release.set()
        await stubborn

    asyncio.run(main())


def test_bounded_gives_up_on_an_awaitable_that_ignores_its_cancel() -> None:
    """asyncio.wait_for (3.11) would wait for _stubborn to end after cancelling it, that
    is forever; bounded raises TimeoutError and leaves it cancelled."""
    async def main() -> tuple[bool, int]:
        release = asyncio.Event()
        stubborn = _stubborn(release)
        timed_out = False
        try:
            await bounded(stubborn, 0.05)
        except TimeoutError:
            timed_out = True
        answer = await bounded(asyncio.sleep(0, result=7), 5)
        release.set()
        await asyncio.sleep(0.01)  # the stubborn task ends once released
        return timed_out, answer

    assert asyncio.run(main()) == (True, 7)
