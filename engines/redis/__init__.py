"""Redis (study 4's key-value family; Aerospike and Couchbase cannot run here): redis-py's
asyncio client on the agents, a record as a hash, block loads as pipelines. Parts:
``agent/`` (the session, error classes, the file runner of ``redis`` slots),
``orchestrator/`` (the workload file's ``redis`` slot and its rendering, the pre-flight
login, the server version, key counts after a load, node figures from ``INFO``),
``sandbox/`` (the sandbox's host redis1: a real ``redis-server``), ``builtin/`` (what
Redis adds to the built-in files: the ycsb file's ``redis`` slots, ycsb-suite's target).
"""

from __future__ import annotations

from loadtower.protocol.engine_kinds import EngineKind

_ORCH = "loadtower.engines.redis.orchestrator"

REDIS = EngineKind(
    "redis", "Redis", 6379, family="redis", dialect="redis", ring=False,
    per_host_port=True, tls_files=False, block_load=True, flush_action=False,
    compaction="none", coordinator_latency=False,
    agent_backend="loadtower.engines.redis.agent.backend:RedisBackend",
    hooks={name: f"{_ORCH}.node:{name}"
           for name in ("before_target", "version", "after_load", "node_stats")},
    sandbox_service="loadtower.engines.redis.sandbox.service:SERVICE",
    workload_file=f"{_ORCH}.file_slot:SLOT",
    builtin_additions="loadtower.engines.redis.builtin",
)  # fmt: skip
KINDS = (REDIS,)
