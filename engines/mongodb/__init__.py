"""MongoDB (the sandbox runs FerretDB): pymongo's asyncio client on the agents, block
loads, TLS from the inventory's files. Parts: ``agent/`` (the session, error classes, the
file runner, TLS), ``orchestrator/`` (pre-flight checks, the server version, the load's
counts, node figures from serverStatus, the workload file's ``mongodb`` slot: calls),
``sandbox/`` (the sandbox's host mongo1: FerretDB on SQLite, built once with Go).
"""

from __future__ import annotations

from loadtower.protocol.engine_kinds import EngineKind

_NODE = "loadtower.engines.mongodb.orchestrator.node"

MONGODB = EngineKind(
    "mongodb", "MongoDB", 27017, family="mongodb", dialect="mongodb", ring=False,
    per_host_port=True, tls_files=True, block_load=True, flush_action=False,
    compaction="none", coordinator_latency=False,
    agent_backend="loadtower.engines.mongodb.agent.backend:MongoBackend",
    target_keys="loadtower.engines.mongodb.orchestrator.target_keys:MongodbTargetKeys",
    hooks={name: f"{_NODE}:{name}"
           for name in ("before_target", "version", "after_load", "node_stats")},
    sandbox_service="loadtower.engines.mongodb.sandbox.service:SERVICE",
    workload_file="loadtower.engines.mongodb.orchestrator.file_slot:SLOT",
)  # fmt: skip
KINDS = (MONGODB,)
