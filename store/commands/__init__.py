"""loadtower.store.commands"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from loadtower.defaults import store_path


def reads_store(run: Callable[[Any], int]) -> Callable[[Any], int]:
    """A store command's ``run(args)`` whose DuckDB errors (a view refused by the
    lockdown, a damaged file) end as one line naming the store, exit 2, never a
    traceback (DuckDB is imported when the command runs, not for ``--help``)."""

    @functools.wraps(run)
    def wrapped(args: Any) -> int:
        # deferred: read_errors loads duckdb; `loadtower --help` imports the store's commands
        from loadtower.store.read_errors import read_errors

        with read_errors(store_path(args)):
            return run(args)

    return wrapped
