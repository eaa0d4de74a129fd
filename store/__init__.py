"""loadtower.store: every sample of every run in one DuckDB file.

Write with StoreWriter (one per process), read with StoreReader (any number, any
process, also while a run is being written). See docs/store.md.
"""

from loadtower.store.admin import delete_run, mark_interrupted_runs
from loadtower.store.compare import compare_runs
from loadtower.store.reader import StoreReader
from loadtower.store.writer import StoreWriter

__all__ = [
    "StoreReader",
    "StoreWriter",
    "compare_runs",
    "delete_run",
    "mark_interrupted_runs",
]
