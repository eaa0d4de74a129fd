"""A MongoDB phase's target as the agents read it: the phase spec's ``target`` (every key
of the scenario's target, protocol/phase_spec.py) with the keys only MongoDB takes
(orchestrator/target_keys.py, ``MongodbTargetKeys``): the client's write concern and read
preference."""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from loadtower.protocol.phase_spec import TargetSpec

if TYPE_CHECKING:
    from loadtower.agents.driver_loop import PhaseConfig


class MongodbTargetSpec(TargetSpec, total=False):
    write_concern: str | int | None  # the write concern's w ("majority" or a count)
    read_preference: str | None  # a read preference's mode name (primary, nearest, ...)


def mongodb_target(cfg: PhaseConfig) -> MongodbTargetSpec:
    """The phase's target with its MongoDB keys typed."""
    return cast(MongodbTargetSpec, cfg.spec["target"])
