"""Stable error classes of the MongoDB backend.

The agent counts a failed op under its exception's class name (``agents/driver_loop.py``).
pymongo's names are many and nest (``NotPrimaryError`` is an ``AutoReconnect``,
``NetworkTimeout`` too), so the session turns each into one of four names that say what
happened, whichever pymongo class raised it:

- ``MongoTimeout``: ServerSelectionTimeoutError, NetworkTimeout, ExecutionTimeout,
  WTimeoutError (a write concern that was not met in time);
- ``MongoNotPrimary``: NotPrimaryError (a write or primary read reached a secondary);
- ``MongoDuplicateKey``: DuplicateKeyError, or a bulk write whose errors are all code 11000;
- ``MongoNetwork``: AutoReconnect, ConnectionFailure (the server went away);

and ``MongoAuthFailed`` for wrong credentials at connect. Anything else keeps its own
class name.
"""

from __future__ import annotations

from typing import Any

from loadtower.agents.stable_errors import stable_as

DUPLICATE_KEY = 11000
AUTH_FAILED = 18


class MongoError(RuntimeError):
    """A pymongo error under a stable name; the original is its ``__cause__``."""


class MongoTimeout(MongoError):
    pass


class MongoNotPrimary(MongoError):
    pass


class MongoDuplicateKey(MongoError):
    pass


class MongoNetwork(MongoError):
    pass


class MongoAuthFailed(MongoError):
    pass


def _bulk_duplicates_only(exc: Any) -> bool:
    details = getattr(exc, "details", None) or {}
    errors = details.get("writeErrors") or []
    return bool(errors) and all(e.get("code") == DUPLICATE_KEY for e in errors)


def classify(exc: BaseException) -> type[MongoError] | None:
    """The stable class for a pymongo exception, None for one that keeps its name."""
    from pymongo import errors as pe

    if isinstance(exc, pe.ServerSelectionTimeoutError | pe.NetworkTimeout | pe.ExecutionTimeout
                  | pe.WTimeoutError):
        return MongoTimeout
    if isinstance(exc, pe.NotPrimaryError):
        return MongoNotPrimary
    if isinstance(exc, pe.DuplicateKeyError) or (
        isinstance(exc, pe.BulkWriteError) and _bulk_duplicates_only(exc)
    ):
        return MongoDuplicateKey
    if isinstance(exc, pe.AutoReconnect | pe.ConnectionFailure):
        return MongoNetwork
    if isinstance(exc, pe.OperationFailure) and exc.code == AUTH_FAILED:
        return MongoAuthFailed
    if isinstance(exc, pe.PyMongoError) and exc.timeout:
        return MongoTimeout
    return None


def stable(exc: BaseException) -> BaseException:
    """``exc`` as its stable class (chained to it), or ``exc`` itself."""
    return stable_as(exc, classify)
