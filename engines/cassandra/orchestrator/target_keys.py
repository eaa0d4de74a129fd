"""The target keys only Cassandra and ScyllaDB take (docs/formats.md): the consistency
level of the agents' requests, the agents' local data centre (DC-aware routing) and
NetworkTopologyStrategy's replicas per data centre (instead of ``replication_factor``).
Both kinds name this one model as their ``target_keys``: scenarios/models.py adds its keys
to `Target` once, and `check` refuses them on a target of another engine. The agents read
``consistency`` and ``local_dc`` from the phase's target (agent/target_spec.py); the
orchestrator renders ``replication`` into the keyspace's DDL (workload.py)."""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import Field

from loadtower.scenarios.checked_types import Replicas, TargetKeys, checked

Consistency = Literal[
    "ONE", "TWO", "THREE", "QUORUM", "ALL", "LOCAL_QUORUM", "EACH_QUORUM", "LOCAL_ONE", "ANY"
]
# a data centre's name goes into the keyspace's DDL (agent/schemas.py, replication_map)
DC_NAME = re.compile(r"[A-Za-z0-9_.-]+")


def dc_name_problem(value: str) -> str | None:
    if DC_NAME.fullmatch(value):
        return None
    return (f"data centre name {value!r} has characters other than letters, digits, '_', "
            "'-' and '.'")


def replication_problem(value: dict[str, int]) -> str | None:
    return None if value else "replication needs at least one data centre, e.g. {dc1 = 2}"


DataCentre = Annotated[str, Field(min_length=1, max_length=128)]
Replication = Annotated[
    dict[Annotated[DataCentre, checked(dc_name_problem)], Replicas],
    checked(replication_problem),
]


class CqlTargetKeys(TargetKeys):
    consistency: Consistency = "LOCAL_QUORUM"
    local_dc: DataCentre | None = None  # None: every node is local
    replication: Replication | None = None

    @classmethod
    def target_problem(cls, target: Any) -> str | None:
        if cls.of(target).replication is not None and \
                "replication_factor" in target.model_fields_set:
            return ("give either replication_factor (SimpleStrategy) or replication "
                    "(per data centre, NetworkTopologyStrategy), not both")
        return None
