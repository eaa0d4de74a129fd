"""Compile the store's numba loops once (numba caches the machine code),
so the first flush of a run, or a test's timed wait, does not pay for the compiler.

`python -m loadtower.numba_warm` (scripts/install.sh) and the test session
(tests/conftest.py) both call `warm_all()`. Modules are named, not imported here: one
that is not installed (the agent set has no store) or has moved is skipped. (The agents
have no numba loops since their hot loop moved into the Rust core.)
"""

from __future__ import annotations

import importlib

KERNEL_MODULES = ("loadtower.store.rollups",)  # its warm() runs hdr_kernels' loops


def warm(module_name: str) -> bool:
    """Run one module's warm(); False if the module (or its package) or warm() is not there."""
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and (module_name == exc.name or module_name.startswith(exc.name + ".")):
            return False
        raise  # the module is there but one of its own imports is missing: a real error
    warm_loops = getattr(module, "warm", None)
    if warm_loops is None:
        return False
    warm_loops()
    return True


def warm_all() -> list[str]:
    """The kernel modules warmed."""
    return [name for name in KERNEL_MODULES if warm(name)]


if __name__ == "__main__":
    print("numba loops compiled: " + (", ".join(warm_all()) or "none found"))
