"""The target keys only MongoDB takes (docs/mongodb.md): the write concern's ``w`` and
the read preference. Named by the kind's ``target_keys``: scenarios/models.py adds them to
`Target`, and `check` refuses them on a target of another engine; the agents read them
from the phase's target (agent/backend.py)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from loadtower.scenarios.checked_types import TargetKeys


class MongodbTargetKeys(TargetKeys):
    write_concern: Literal["majority"] | Annotated[int, Field(ge=0, le=50)] | None = None
    read_preference: (
        Literal["primary", "primaryPreferred", "secondary", "secondaryPreferred", "nearest"] | None
    ) = None
