"""The orchestrator's engine seam: what it does for an engine beyond driving the load.

One entry per engine of the models (``models.Engine``); adding an engine is one entry
here plus, where it needs them, a module with hooks (``clickhouse_node.py``,
``mongodb_node.py``). The agents' side of an engine is ``agents/backends.py``; what an
engine can do (block loads, a ring, ...) is its kind's (``protocol/engine_kinds.py``).

- ``before_target``: ``async (ctx) -> ...`` before a target's first phase (pre-flight
  checks, warnings about what the timings mean);
- ``version``: ``async (actions, plan, host, timeout) -> dict`` with the server's
  ``version`` (CQL engines: ``db_query``'s own queries);
- ``after_load``: ``async (ctx, phase index) -> dict`` merged into the load's result;
- ``compact``: ``async (ctx, host, timeout) -> dict``, the compaction phase's entry of a
  host that declares no ``compact`` action, for an engine whose kind's compaction is
  ``statement`` (ClickHouse: ``OPTIMIZE TABLE ... FINAL``, named by ``compact_what``);
- ``node_stats``: ``async (actions, plan, host, emit, interval)`` that emits the
  server's own figures until cancelled (rows of the store's ``node_stats`` table;
  Cassandra: tombstones scanned per read per table, ``cql_node_stats.py``).

Hooks are ``"module:function"`` and imported on first use.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any

_CLICKHOUSE = "loadtower.scenarios.orchestrator.clickhouse_node"
_MONGODB = "loadtower.scenarios.orchestrator.mongodb_node"


@dataclass(frozen=True)
class EngineSeam:
    before_target: str | None = None
    version: str | None = None
    after_load: str | None = None
    node_stats: str | None = None
    compact: str | None = None
    compact_what: str = "its compaction statement"


SEAMS: dict[str, EngineSeam] = {
    "cassandra": EngineSeam(
        node_stats="loadtower.scenarios.orchestrator.cql_node_stats:node_stats",
    ),
    "scylla": EngineSeam(),
    "clickhouse": EngineSeam(
        before_target=f"{_CLICKHOUSE}:warn_sandbox_endpoints",
        version="loadtower.scenarios.orchestrator.db_query:clickhouse_version",
        compact=f"{_CLICKHOUSE}:optimize_final",
        compact_what="OPTIMIZE TABLE ... FINAL",
    ),
    "mongodb": EngineSeam(
        before_target=f"{_MONGODB}:before_target",
        version=f"{_MONGODB}:version",
        after_load=f"{_MONGODB}:after_load",
        node_stats=f"{_MONGODB}:node_stats",
    ),
}


def seam(engine: str | None) -> EngineSeam:
    return SEAMS.get(str(engine), EngineSeam())


def hook(engine: str | None, name: str) -> Any:
    """The engine's hook ``name`` (a function), or None if it has none."""
    where = getattr(seam(engine), name)
    if where is None:
        return None
    module, _, function = where.partition(":")
    return getattr(importlib.import_module(module), function)
