"""One kind of error for every failed read: readers outside the store (the TUI) catch
LoadtowerError and never need to know the database underneath."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import duckdb

from loadtower.errors import LoadtowerError


class StoreReadError(LoadtowerError):
    """The store could not be read (locked too long, damaged, an unexpected schema)."""


@contextmanager
def read_errors(store: object) -> Iterator[None]:
    """Turn a DuckDB error raised inside into a StoreReadError naming `store`."""
    try:
        yield
    except duckdb.Error as exc:
        first = (str(exc).splitlines() or [type(exc).__name__])[0]
        if isinstance(exc, duckdb.PermissionException):
            raise StoreReadError(f"cannot read {store}: it asks for file access (a view "
                                 f"over a file?), which a store is never given: {first}"
                                 ) from exc
        raise StoreReadError(f"cannot read {store}: {first}") from exc

