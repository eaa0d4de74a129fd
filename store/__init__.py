"""loadtower.store: every sample of every run in one DuckDB file.

Write with StoreWriter (one per process), read with StoreReader (any number, any
process, also while a run is being written). See docs/store.md.

Names are imported lazily so that `loadtower --help` (which imports the command
modules under this package) does not load DuckDB.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "StoreReader": "loadtower.store.reader",
    "StoreWriter": "loadtower.store.writer",
    "compare_runs": "loadtower.store.compare",
    "delete_run": "loadtower.store.admin",
    "mark_interrupted_runs": "loadtower.store.admin",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'loadtower.store' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
