"""Stable error classes of the Redis backend.

The agent counts a failed op under its exception's class name (``agents/driver_loop.py``);
redis-py's classes nest (``BusyLoadingError`` is a ``ConnectionError``), so the session
turns each into one name that says what happened:

- ``RedisTimeout``: TimeoutError (no reply within the socket timeout);
- ``RedisConnection``: ConnectionError (the server went away or refuses connections);
- ``RedisLoading``: BusyLoadingError (a restarted server still loading its data set);
- ``RedisReadOnly``: ReadOnlyError (a write reached a replica);
- ``RedisAuthFailed``: AuthenticationError, or WRONGPASS / NOAUTH replies;
- ``RedisResponse``: any other error reply (a wrong type, a bad argument).
"""

from __future__ import annotations

from loadtower.agents.stable_errors import stable_as


class RedisError(RuntimeError):
    """A redis-py error under a stable name; the original is its ``__cause__``."""


class RedisTimeout(RedisError):
    pass


class RedisConnection(RedisError):
    pass


class RedisLoading(RedisError):
    pass


class RedisReadOnly(RedisError):
    pass


class RedisAuthFailed(RedisError):
    pass


class RedisResponse(RedisError):
    pass


def classify(exc: BaseException) -> type[RedisError] | None:
    """The stable class of a redis-py exception, None for one that keeps its name."""
    from redis import exceptions as re_

    text = str(exc)
    if isinstance(exc, re_.AuthenticationError | re_.AuthorizationError) or (
        isinstance(exc, re_.ResponseError) and text.startswith(("WRONGPASS", "NOAUTH"))
    ):
        return RedisAuthFailed
    if isinstance(exc, re_.BusyLoadingError):
        return RedisLoading
    if isinstance(exc, re_.TimeoutError):
        return RedisTimeout
    if isinstance(exc, re_.ConnectionError):
        return RedisConnection
    if isinstance(exc, re_.ReadOnlyError):
        return RedisReadOnly
    if isinstance(exc, re_.ResponseError):
        return RedisResponse
    if isinstance(exc, TimeoutError):  # asyncio's, around a whole pipeline
        return RedisTimeout
    return None


def stable(exc: BaseException) -> BaseException:
    """``exc`` as its stable class (chained to it), or ``exc`` itself."""
    return stable_as(exc, classify)
