"""Hand the C heap's free pages back to the OS after a store flush (glibc's malloc_trim).

Why: a flush frees what a second of a large fleet left behind (at 1,024 workers about
22 MB/s of interval lines: each line a few dozen strings of about 1 KB, then the
flush's own batches, Arrow tables and DuckDB's work). glibc keeps freed chunks in its
arenas for reuse and gives memory back only from the top of a heap, past a threshold
that it raises to the largest block freed so far; so the process's RSS shows the
peak of the last seconds, not what is alive. `malloc_trim(0)` releases every whole
free page of every arena (madvise), wherever it is in the heap.
Where libc has no `malloc_trim` (musl, macOS) this does nothing.
"""

from __future__ import annotations

import ctypes
import time
from collections.abc import Callable


def _malloc_trim() -> Callable[[int], int] | None:
    """libc's malloc_trim, or None where the C library has none."""
    try:
        libc = ctypes.CDLL(None)  # the symbols already in this process: its libc's
        trim = libc.malloc_trim
    except (OSError, AttributeError):
        return None
    trim.argtypes = [ctypes.c_size_t]
    trim.restype = ctypes.c_int
    return trim


_TRIM = _malloc_trim()


class HeapTrim:
    """Calls malloc_trim(0) and counts what it costs (calls, seconds)."""

    def __init__(self) -> None:
        self.available = _TRIM is not None
        self.calls = 0
        self.seconds = 0.0

    def __call__(self) -> bool:
        """Trim now; False where libc has no malloc_trim (nothing was done)."""
        if _TRIM is None:
            return False
        start = time.perf_counter()
        _TRIM(0)
        self.seconds += time.perf_counter() - start
        self.calls += 1
        return True
