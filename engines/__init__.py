"""The database engines, one package each (issue 30): ``cassandra`` (ScyllaDB too),
``clickhouse``, ``mongodb``.

Each package's ``__init__`` declares its engines' kinds (``KINDS``: what each can do,
``protocol/engine_kinds.py``) and is registered under the ``loadtower.engines``
entry-point group; the core finds engines there and never imports this room. An
engine's parts are kept apart by where they run: ``agent/`` on load hosts (in the agent
install set, importing only ``agents`` and ``protocol``), ``orchestrator/`` on the
orchestrator (probes, node figures). How to add one: docs/engines.md.
"""
