"""The scenario models' base and the checked string types that engine packages share
with them: an engine's own target keys (its kind's ``target_keys``) are a model of this
`Strict` base and may use `Name` and `checked`, without importing scenarios/models.py,
which builds `Target` from them."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated

from pydantic import AfterValidator, BaseModel, ConfigDict

from loadtower.scenarios.identifiers import name_problem


class Strict(BaseModel):
    model_config = ConfigDict(
        extra="forbid", strict=True, frozen=True, populate_by_name=True, allow_inf_nan=False
    )


def checked(problem_of: Callable[[str], str | None]) -> AfterValidator:
    """A validator raising the problem `problem_of` finds (one line for the loader)."""

    def check(value: str) -> str:
        problem = problem_of(value)
        if problem:
            raise ValueError(problem)
        return value

    return AfterValidator(check)


Name = Annotated[str, checked(name_problem)]  # keyspace, table, database, column
