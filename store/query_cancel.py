"""QueryCancelled, apart from the reader that raises it (StoreReader.sql), so that the
TUI's SQL console catches it without loading DuckDB before its first query."""

from __future__ import annotations

from loadtower.errors import LoadtowerError


class QueryCancelled(LoadtowerError):
    """A user's query stopped by its cancel event (Ctrl-C, a TUI key)."""
