"""Redis commands as the phase spec carries them (StatementSpec's ``call``): what the
orchestrator renders of an op's ``redis`` slot and the agent sends.

``{"commands": [[arg, ...], ...], "each": [arg, ...]}`` (``each`` only for a read of each
member of the last reply). An argument is text or a number as it is, ``{"$param": name}``
(protocol/workload_file_spec.py ``PARAM_MARK``: the row's value), ``{"$join": [part,
...]}`` (text and parameters joined into one argument) or ``{"$each": 1}`` (one member
of the reply)."""

from __future__ import annotations

from typing import Any, TypedDict

JOIN = "$join"
EACH = "$each"


class RedisCallSpec(TypedDict, total=False):
    commands: list[list[Any]]
    each: list[Any]
