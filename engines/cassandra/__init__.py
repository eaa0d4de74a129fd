"""Cassandra and ScyllaDB (CQL): one package, two kinds.

ScyllaDB is Cassandra's flavour here: the same driver, CQL, agents' backend and Rust load
core; it has no coordinator latency tables. Parts: ``agent/`` (sessions over
cassandra-driver or acsylla, the file runner, the Rust core's feed), ``orchestrator/``
(the target keys both take, the CQL client of its hooks, the server version, tombstones
per read from the nodes' tables, the requests a node coordinated, a joined node's
streams, workload files in CQL), ``sandbox/`` (Cassandra's nodes as the sandbox's ring:
their config, command line, nodetool, jars and login).
"""

from __future__ import annotations

from dataclasses import replace

from loadtower.protocol.engine_kinds import EngineKind

_ORCH = "loadtower.engines.cassandra.orchestrator"

CASSANDRA = EngineKind(
    "cassandra", "Cassandra", 9042, family="cql", dialect="cassandra", ring=True,
    per_host_port=False, tls_files=True, block_load=False, flush_action=True,
    compaction="action", coordinator_latency=True,
    agent_backend="loadtower.engines.cassandra.agent.backend:CqlBackend",
    target_keys=f"{_ORCH}.target_keys:CqlTargetKeys",
    hooks={"version": f"{_ORCH}.version:version",
           "node_stats": f"{_ORCH}.node_stats:node_stats",
           "check_target": f"{_ORCH}.target_checks:check_target",
           "load_path": f"{_ORCH}.load_path:load_path",
           "coordinated": f"{_ORCH}.coordinated:coordinated",
           "bootstrap_streams": f"{_ORCH}.streams:bootstrap_streams"},
    workload_file=f"{_ORCH}.file_slot:SLOT",
    native_feed="loadtower.engines.cassandra.agent.rust_feed:RustFeed",
    sandbox_ring="loadtower.engines.cassandra.sandbox.ring:RING",
    default=True,  # a scenario that names no engine runs Cassandra
    drivers=("acsylla", "cassandra-driver"),
    path_event="cql_path",  # the Rust core's feed says which path a phase takes
)  # fmt: skip
SCYLLA = replace(
    CASSANDRA, name="scylla", title="ScyllaDB", coordinator_latency=False,
    sandbox_ring=None, default=False,  # the sandbox's ring runs Cassandra
    hooks={"version": f"{_ORCH}.version:scylla_version",
           "check_target": f"{_ORCH}.target_checks:check_target",
           "load_path": f"{_ORCH}.load_path:load_path",
           "bootstrap_streams": f"{_ORCH}.streams:bootstrap_streams"},
)  # fmt: skip
KINDS = (CASSANDRA, SCYLLA)
