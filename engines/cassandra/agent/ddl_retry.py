"""Schema statements that a hung node cannot stop: each attempt has a short timeout and
a timed-out attempt is sent again (the drivers' round-robin then picks another
coordinator), until a total bound. A phase that starts while a node is paused thus
creates (or finds) its table through a live node instead of failing the run."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable

ATTEMPT_S = 10.0  # one attempt's timeout (the statement's own, set by the session)
TOTAL_S = 60.0  # the whole statement's bound, as before


def timed_out(exc: BaseException) -> bool:
    """A driver timeout of either driver (acsylla's CassErrorLib/ServerRequestTimedOut...,
    cassandra-driver's OperationTimedOut)."""
    name = type(exc).__name__
    return "TimedOut" in name or "Timeout" in name


async def with_retries(send: Callable[[], Awaitable[object]], clock: Callable[[], float]
                       = time.monotonic) -> None:
    deadline = clock() + TOTAL_S
    while True:
        try:
            await send()
            return
        except Exception as exc:
            if not timed_out(exc) or clock() + ATTEMPT_S > deadline:
                raise
