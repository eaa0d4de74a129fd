"""Running a store query so that Ctrl-C stops it at once.

A DuckDB query runs in C++; Python runs a signal handler only between bytecodes of the
main thread, so Ctrl-C during `con.execute()` on the main thread waits for the query
to end (once 599 s and 8.4 GB). Here the query runs in a worker thread and the main
thread only waits for it: Ctrl-C (SIGINT, KeyboardInterrupt) reaches the main thread
at once, sets the query's cancel event (StoreReader.sql interrupts the connection and
raises QueryCancelled), waits up to STOP_WAIT_S for the worker to let go of the store,
and raises KeyboardInterrupt: the command line prints one line and exits 130.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")
STOP_WAIT_S = 1.5  # for the interrupted query to give the store back


def run_cancellable(work: Callable[[threading.Event], T]) -> T:
    """`work(cancel)` in a worker thread; Ctrl-C sets `cancel` (see the module doc)."""
    cancel, done = threading.Event(), threading.Event()
    outcome: dict[str, Any] = {}

    def target() -> None:
        try:
            outcome["value"] = work(cancel)
        except BaseException as exc:  # noqa: BLE001 - handed to the main thread
            outcome["error"] = exc
        finally:
            done.set()

    # waited for through an Event, not Thread.join(): a KeyboardInterrupt inside join()
    # marks a thread that still runs as stopped (bpo-45274, Python 3.11), and the
    # interpreter then exits under a query still running in DuckDB (abort, exit 134)
    threading.Thread(target=target, name="store-query", daemon=True).start()
    try:
        done.wait()
    except KeyboardInterrupt:
        cancel.set()
        done.wait(STOP_WAIT_S)
        raise
    if "error" in outcome:
        raise outcome["error"]
    value: T = outcome["value"]
    return value
