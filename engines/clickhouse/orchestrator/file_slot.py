"""The ``clickhouse`` slot of a workload file: an op's SQL statement, and a table's
engine, ORDER BY, PARTITION BY, TTL, extra columns, skip indexes, settings, column types
and raw DDL."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from loadtower.engines.clickhouse.orchestrator.target_keys import runs_mutations
from loadtower.scenarios.models import Name, Strict
from loadtower.scenarios.workloads.file_slot import FileSlot
from loadtower.scenarios.workloads.model_types import OptionValue, Statement
from loadtower.scenarios.workloads.sql_ycsb import sql_ycsb_properties

NAME = "clickhouse"


class ClickhouseTtl(Strict):
    column: Name
    seconds: Annotated[int, Field(ge=0)]  # 0: no TTL


class ClickhouseTable(Strict):
    engine: Annotated[str, Field(min_length=1, max_length=200)] = "MergeTree"
    order_by: list[Name] | None = None  # default: partition key, then clustering key
    partition_by: Annotated[str, Field(max_length=1000)] | None = None
    ttl: ClickhouseTtl | None = None
    # columns the statements never write: "ver UInt64 DEFAULT now64()"-like definitions
    extra_columns: dict[Name, Annotated[str, Field(max_length=1000)]] = Field(
        default_factory=dict
    )
    skip_indexes: dict[Name, Annotated[str, Field(max_length=1000)]] = Field(
        default_factory=dict
    )
    settings: dict[Name, OptionValue] = Field(default_factory=dict)
    types: dict[Name, Annotated[str, Field(max_length=200)]] = Field(default_factory=dict)
    ddl: list[Statement] | None = None



SLOT = FileSlot(NAME, Statement, ClickhouseTable, column_keys=("order_by", "types"),
                rendering="loadtower.engines.clickhouse.orchestrator.workload:RENDERING",
                ycsb_properties=sql_ycsb_properties(NAME), mutation_variants=runs_mutations)


def clickhouse_of(table: Any) -> ClickhouseTable:
    """A file's table's ``[tables.T.clickhouse]`` (its defaults when the file gives none)."""
    found = table.slot(SLOT.name)
    assert isinstance(found, ClickhouseTable)
    return found

