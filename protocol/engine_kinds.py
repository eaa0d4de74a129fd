"""What each database engine can do, asked by capability rather than by name (issue 30).

One `EngineKind` per value of a scenario's or an inventory host's `engine`. The core
asks `kind(engine).ring` (can a node join by scale_out), `.block_load` (does a built-in
workload's load insert blocks), `.dialect` (which statement slot of a workload file it
runs) and so on, instead of comparing the engine's name with a list of names kept where
the question is asked. This module is the one place those facts are declared until the
engines are packages of their own: each will then declare its `EngineKind` itself.

The protocol room holds it because both sides ask: the orchestrator's checks, plans and
phases, and the agents.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

Compaction = Literal["action", "statement", "none"]


@dataclass(frozen=True)
class EngineKind:
    name: str  # the `engine` value of a scenario, a target or an inventory host
    title: str  # how messages and docs name it
    default_port: int  # the client port when the inventory gives none
    family: str  # engines that share a driver, a node protocol and names ("cql")
    dialect: str  # the statement slot of a workload file it runs (`cassandra`, ...)
    ring: bool  # a standby node joins a ring: scale_out can add one
    per_host_port: bool  # each inventory host may give its own client port
    tls_files: bool  # [ENGINE] tls_*_file keys: read here, sent to the agents as PEM
    block_load: bool  # a built-in workload's load phase inserts blocks (insert_batch)
    flush_action: bool  # a flush phase runs the inventory's `flush` action on its hosts
    compaction: Compaction  # action: the `compact` action; statement: loadtower's own
    rust_core: bool  # the agents' Rust load core drives it (the scylla driver, CQL)
    coordinator_latency: bool  # nodes keep system_views.coordinator_*_latency tables
    only_keys: tuple[str, ...] = ()  # target keys that only this engine accepts


_CASSANDRA = EngineKind(
    "cassandra", "Cassandra", 9042, family="cql", dialect="cassandra", ring=True,
    per_host_port=False, tls_files=True, block_load=False, flush_action=True, compaction="action",
    rust_core=True, coordinator_latency=True,
)  # fmt: skip
KINDS: dict[str, EngineKind] = {
    k.name: k
    for k in (
        _CASSANDRA,
        # the same driver, CQL and agents' backend (the Rust core too); ScyllaDB has no
        # coordinator latency tables
        replace(_CASSANDRA, name="scylla", title="ScyllaDB", coordinator_latency=False),
        EngineKind(
            "clickhouse", "ClickHouse", 8123, family="clickhouse", dialect="clickhouse",
            ring=False, per_host_port=True, tls_files=False, block_load=True, flush_action=False,
            compaction="statement", rust_core=False, coordinator_latency=False,
            only_keys=("table_engine", "order_by", "skip_indexes", "delete_mode",
                       "update_mode"),
        ),  # fmt: skip
        EngineKind(
            "mongodb", "MongoDB", 27017, family="mongodb", dialect="mongodb", ring=False,
            per_host_port=True, tls_files=True, block_load=True, flush_action=False,
            compaction="none", rust_core=False, coordinator_latency=False,
            only_keys=("write_concern", "read_preference"),
        ),  # fmt: skip
    )
}
ENGINE_NAMES = tuple(KINDS)
DIALECTS = tuple(dict.fromkeys(k.dialect for k in KINDS.values()))


def kind(engine: str) -> EngineKind:
    """The engine's kind; KeyError for a name no engine has (the models refuse those)."""
    return KINDS[engine]


def titles(names: list[str]) -> str:
    """`Cassandra/ScyllaDB`: the engines' titles, for a message."""
    return "/".join(KINDS[n].title for n in names)


def with_capability(**wanted: object) -> list[str]:
    """The engines whose kind has every given field at the given value."""
    return [n for n, k in KINDS.items() if all(getattr(k, f) == v for f, v in wanted.items())]
