"""The ``cassandra`` slot of a workload file (Cassandra and ScyllaDB): an op's CQL
statement, and a table's CQL options (``WITH k = v``), clustering order, column types
and raw DDL."""

from __future__ import annotations

from collections.abc import Collection
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, field_validator

from loadtower.scenarios.models import Name, Strict
from loadtower.scenarios.workloads.file_slot import FileSlot
from loadtower.scenarios.workloads.model_types import OPTION_KEY, Option, Statement
from loadtower.scenarios.workloads.sql_ycsb import sql_ycsb_properties

NAME = "cassandra"


class CassandraTable(Strict):
    options: dict[Name, Option] = Field(default_factory=dict)  # WITH k = v AND ...

    @field_validator("options", mode="before")
    @classmethod
    def _map_keys_are_words(cls, options: Any) -> Any:
        for name, value in (options or {}).items() if isinstance(options, dict) else ():
            for key in value if isinstance(value, dict) else ():
                if not isinstance(key, str) or not OPTION_KEY.fullmatch(key):
                    raise ValueError(f"option {name}: map key {str(key)[:60]!r} is not a "
                                     "word (letters, digits, '_', '.', '-')")
        return options
    clustering_order: dict[Name, Literal["ASC", "DESC"]] = Field(default_factory=dict)
    types: dict[Name, Annotated[str, Field(max_length=200)]] = Field(default_factory=dict)
    ddl: list[Statement] | None = None  # raw DDL instead of the generated CREATE TABLE


def _tune_builtin(own: BaseModel, workload: Any, declared: Collection[str]) -> BaseModel:
    """A scenario's ``bloom_filter_fp_chance`` on a built-in whose file has no such
    variable (ycsb, recipes) becomes the table's option, as the engines' own DDL had it."""
    chance = getattr(workload, "bloom_filter_fp_chance", None)
    if chance is None or "bloom_filter_fp_chance" in declared:
        return own
    assert isinstance(own, CassandraTable)
    return own.model_copy(update={"options": {**own.options,
                                              "bloom_filter_fp_chance": float(chance)}})



SLOT = FileSlot(NAME, Statement, CassandraTable,
                column_keys=("clustering_order", "types"),
                rendering="loadtower.engines.cassandra.orchestrator.workload:RENDERING",
                tune_builtin=_tune_builtin, ycsb_properties=sql_ycsb_properties(NAME))


def cassandra_of(table: Any) -> CassandraTable:
    """A file's table's ``[tables.T.cassandra]`` (its defaults when the file gives none)."""
    found = table.slot(SLOT.name)
    assert isinstance(found, CassandraTable)
    return found

