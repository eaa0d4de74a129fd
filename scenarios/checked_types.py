"""The scenario models' base and the checked types that engine packages share with them:
an engine's own target keys (its kind's ``target_keys``) are a model of `TargetKeys` and
may use `Name`, `Replicas` and `checked`, without importing scenarios/models.py, which
builds `Target` from them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Self, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from loadtower.scenarios.identifiers import name_problem

V = TypeVar("V")
MAX_RF = 100  # replicas of a keyspace (in all, or in one data centre)


class Strict(BaseModel):
    model_config = ConfigDict(
        extra="forbid", strict=True, frozen=True, populate_by_name=True, allow_inf_nan=False
    )


class TargetKeys(Strict):
    """The keys only one engine's targets take (two kinds of one family may name one
    model). `Target` has them beside the keys every engine takes."""

    @classmethod
    def of(cls, target: Any) -> Self:
        """A target's keys of this model (validated with the target), read back typed."""
        return cls.model_construct(**{k: getattr(target, k) for k in cls.model_fields})

    @classmethod
    def target_problem(cls, target: Any) -> str | None:
        """What is wrong with these keys beside the keys every engine takes (one line),
        or None; `Target`'s validator asks it of every target."""
        return None


def checked(problem_of: Callable[[V], str | None]) -> AfterValidator:
    """A validator raising the problem `problem_of` finds (one line for the loader)."""

    def check(value: V) -> V:
        problem = problem_of(value)
        if problem:
            raise ValueError(problem)
        return value

    return AfterValidator(check)


Name = Annotated[str, checked(name_problem)]  # keyspace, table, database, column
Replicas = Annotated[int, Field(gt=0, le=MAX_RF)]  # a replication factor
