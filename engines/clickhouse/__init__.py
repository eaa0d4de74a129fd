"""ClickHouse: HTTP through clickhouse-connect on the agents, block loads, compaction as a
statement (``OPTIMIZE TABLE ... FINAL``). Parts: ``agent/`` (the session, the file
runner, schemas' names), ``orchestrator/`` (the compaction statement, the sandbox
endpoint's warning, the server version, workload files in its SQL), ``sandbox/`` (the
sandbox's host ch1: ClickHouse's engine, chdb, behind a small HTTP endpoint).
"""

from __future__ import annotations

from loadtower.protocol.engine_kinds import EngineKind

_ORCH = "loadtower.engines.clickhouse.orchestrator"

CLICKHOUSE = EngineKind(
    "clickhouse", "ClickHouse", 8123, family="clickhouse", dialect="clickhouse",
    ring=False, per_host_port=True, tls_files=False, block_load=True, flush_action=False,
    compaction="statement", coordinator_latency=False,
    agent_backend="loadtower.engines.clickhouse.agent.backend:ClickhouseBackend",
    target_keys=f"{_ORCH}.target_keys:ClickhouseTargetKeys",
    hooks={"before_target": f"{_ORCH}.node:warn_sandbox_endpoints",
           "version": f"{_ORCH}.version:version",
           "compact": f"{_ORCH}.node:optimize_final",
           "check_target": f"{_ORCH}.target_checks:check_target"},
    compact_what="OPTIMIZE TABLE ... FINAL", drivers=("clickhouse-connect",),
    sandbox_service="loadtower.engines.clickhouse.sandbox.service:SERVICE",
    workload_file=f"{_ORCH}.file_slot:SLOT",
)  # fmt: skip
KINDS = (CLICKHOUSE,)
