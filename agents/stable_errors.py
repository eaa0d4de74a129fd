"""An engine's driver errors under stable class names (the agent counts a failed op under
its exception's class name, agents/driver_loop.py). An engine's ``classify`` says which
of its stable classes a driver exception is (None: it keeps its own name); these two
wrap an exception, or an awaited call's failure, in that class, chained to the original."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")
Classify = Callable[[BaseException], type[Exception] | None]


def stable_as(exc: BaseException, classify: Classify) -> BaseException:
    """``exc`` as its stable class (chained to it, its first line kept), or ``exc``."""
    cls = classify(exc)
    if cls is None:
        return exc
    first = (str(exc).splitlines() or [type(exc).__name__])[0][:300]
    wrapped = cls(f"{type(exc).__name__}: {first}")
    wrapped.__cause__ = exc
    return wrapped


async def guarded_by(call: Awaitable[T], classify: Classify) -> T:
    """Awaits ``call``; its failure leaves under its stable class."""
    try:
        return await call
    except Exception as exc:
        mapped = stable_as(exc, classify)
        if mapped is exc:
            raise
        raise mapped from exc
