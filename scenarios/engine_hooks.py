"""The engines' hooks: what the orchestrator (and `check`) does for an engine beyond
driving the load. In scenarios because `check` asks two of them (``check_target``,
``load_path``) and scenarios import nothing of the orchestrator room.

Each engine's kind names its hooks (``hooks``: name -> ``"module:function"``, declared
in its package, ``loadtower.engines.NAME``); this module imports one on first use. The
agents' side of an engine is its kind's ``agent_backend``; what an engine can do (block
loads, a ring, ...) is its kind's too (``protocol/engine_kinds.py``).

- ``before_target``: ``async (ctx) -> ...`` before a target's first phase (pre-flight
  checks, warnings about what the timings mean);
- ``version``: ``async (actions, plan, host, timeout) -> dict`` with the server's
  ``version`` (``db_query.db_version``);
- ``after_load``: ``async (ctx, phase index) -> dict`` merged into the load's result;
- ``compact``: ``async (ctx, host, timeout) -> dict``, the compaction phase's entry of a
  host that declares no ``compact`` action, for an engine whose kind's compaction is
  ``statement`` (e.g. a column store's ``OPTIMIZE TABLE ... FINAL``, named by
  ``compact_what``);
- ``node_stats``: ``async (actions, plan, host, emit, interval)`` that emits the
  server's own figures until cancelled (rows of the store's ``node_stats`` table;
  e.g. tombstones scanned per read per table);
- ``check_target``: ``(scenario, single, where) -> (key path, problem) | None``, what
  ``loadtower check`` refuses in a target of the engine beyond its keys' types (names its
  statements cannot take; a table engine, update mode or ORDER BY that would make the
  figures wrong); `single` is the scenario for that target, `where` its keys'
  path (``("targets", NAME)`` or ``("target",)``);
- ``load_path``: ``(label, target, credentials) -> str``, the line `check` prints of the
  load path a target of the engine asks for (e.g. the agents' sender, TLS, data centre);
- ``coordinated``: ``async (actions, plan, host, timeout) -> int``, the requests node
  `host` coordinated since it started on the plan's target keyspace (and table, when the
  target names one), read at each phase's start and end (``coordinators.py``); an engine
  without it has no per-node record of the phase;
- ``bootstrap_streams``: ``async (actions, plan, host, timeout) -> dict | None``, a node
  that joined by ``scale_out``: its own record of its bootstrap streams
  (``streaming_duration_s``, ``streaming_status``, ``streamed_bytes``,
  ``streamed_files``, and where they come from: ``streaming_source``), None when it has
  no bootstrap entry; it raises ``NoRecord`` when the node keeps no such record at all, any other error when it does not answer
  (yet: the phase asks again for a while).
"""

from __future__ import annotations

from typing import Any

from loadtower.protocol.engine_kinds import KINDS, load_attribute

HOOKS = ("before_target", "version", "after_load", "compact", "node_stats", "check_target",
         "load_path", "coordinated", "bootstrap_streams")


class NoRecord(Exception):  # noqa: N818 - what it says: the server keeps no such record
    """A hook's answer: the server keeps no record of what was asked (not an error of the
    run; ``bootstrap_streams`` of a node without a record of its streams)."""


def hook(engine: str | None, name: str) -> Any:
    """The engine's hook ``name`` (a function), or None if it has none."""
    if name not in HOOKS:
        raise ValueError(f"no engine hook is called {name!r} (hooks: {', '.join(HOOKS)})")
    found = KINDS.get(str(engine))
    where = found.hooks.get(name) if found is not None else None
    return None if where is None else load_attribute(where)


def compact_what(engine: str | None) -> str:
    """What the engine's ``compact`` hook runs, for messages."""
    found = KINDS.get(str(engine))
    return found.compact_what if found is not None else "its compaction statement"
