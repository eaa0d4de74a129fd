"""Opening the store file: short-lived connections, retried while another process holds it.

DuckDB lets one process open a file read-write and no other process open it at the
same time, even read-only. So nobody keeps the file open: the writer opens it for
each flush (about once a second, a few milliseconds) and readers for each query;
whoever finds it locked retries for a while.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb

from loadtower.errors import LoadtowerError

RETRY_S = 0.01
_BUSY = ("could not set lock", "conflicting lock", "different configuration")


def is_busy(exc: BaseException) -> bool:
    text = str(exc).lower()
    return any(word in text for word in _BUSY)


@contextmanager
def connect(
    path: Path, read_only: bool, wait_s: float = 30.0
) -> Iterator[duckdb.DuckDBPyConnection]:
    """A connection to `path`, retrying up to `wait_s` while another process has it open."""
    path = Path(path)
    if read_only and not path.exists():
        raise LoadtowerError(f"no store at {path} (run a scenario first, or pass --store)")
    deadline = time.monotonic() + wait_s
    delay = RETRY_S
    while True:
        try:
            con = duckdb.connect(str(path), read_only=read_only)
            break
        except (duckdb.IOException, duckdb.ConnectionException) as exc:
            if not is_busy(exc):
                raise LoadtowerError(f"cannot open store {path}: {exc}") from exc
            if time.monotonic() > deadline:
                raise LoadtowerError(f"store {path} stayed locked by another process") from exc
            time.sleep(delay)
            delay = min(delay * 1.5, 0.2)
    try:
        yield con
    finally:
        con.close()
