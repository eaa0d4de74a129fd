"""A CQL phase's target as the agents read it: the phase spec's ``target`` (every key of
the scenario's target, protocol/phase_spec.py) with the keys only Cassandra and ScyllaDB
take (orchestrator/target_keys.py, ``CqlTargetKeys``) that the agents use; the
orchestrator renders ``replication`` into the keyspace's DDL itself."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from loadtower.protocol.phase_spec import TargetSpec

if TYPE_CHECKING:
    from loadtower.agents.driver_loop import PhaseConfig


class CqlTargetSpec(TargetSpec, total=False):
    consistency: str  # the requests' consistency level (cassandra's ConsistencyLevel name)
    local_dc: str | None  # DC-aware routing with this local data centre; None: every DC


def cql_target(cfg: PhaseConfig) -> CqlTargetSpec:
    """The phase's target with its CQL keys typed."""
    return cast(CqlTargetSpec, cfg.spec["target"])
