"""A ClickHouse phase's target as the agents read it: the phase spec's ``target`` (every
key of the scenario's target, protocol/phase_spec.py) with the key only ClickHouse takes
(orchestrator/target_keys.py, ``ClickhouseTargetKeys``) that the agents use; the
orchestrator renders ``table_engine``, ``order_by``, ``skip_indexes`` and
``update_mode`` into the DDL and the statements itself."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from loadtower.protocol.phase_spec import TargetSpec

if TYPE_CHECKING:
    from loadtower.agents.driver_loop import PhaseConfig


class ClickhouseTargetSpec(TargetSpec, total=False):
    # how deletes write: lightweight or mutation; None: settings' delete_mode, else lightweight
    delete_mode: str | None


def clickhouse_target(cfg: PhaseConfig) -> ClickhouseTargetSpec:
    """The phase's target with its ClickHouse key typed."""
    return cast(ClickhouseTargetSpec, cfg.spec["target"])
