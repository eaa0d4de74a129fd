"""The workload file model: tables, data sets, ops with one statement per engine,
bindings (``loadtower.scenarios.workloads.loader`` validates a file into it).

A plain description: ``as_spec()`` (``model_dump``) is what travels to agents in the
phase spec; nothing in it is Python code.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import Discriminator, Field, Tag, field_validator, model_validator

from loadtower.scenarios.models import MAX_BATCH, MAX_FIELDS, Name, Strict, Weight
from loadtower.scenarios.workloads.generators import Generator, KeyDraw
from loadtower.scenarios.workloads.types import TypeName

OptionValue = str | int | float | bool
# a key of an option's map (CQL's compaction = {'class': ..., 'max_threshold': 32}): a
# word, never quotes or anything else that could end the map in the rendered statement
OPTION_KEY = re.compile(r"[A-Za-z0-9_.-]{1,100}")
OptionKey = Annotated[str, Field(min_length=1, max_length=100, pattern=r"^[A-Za-z0-9_.-]+$")]
Option = OptionValue | dict[OptionKey, OptionValue]
Statement = Annotated[str, Field(min_length=1, max_length=100_000)]
Rows = Annotated[int, Field(gt=0, le=MAX_BATCH)]
Slot = Literal["cassandra", "clickhouse", "mongodb"]  # the engines a file has statements for
SLOTS: tuple[Slot, ...] = ("cassandra", "clickhouse", "mongodb")  # Op's statement fields' order
# a number, or a table by engine (its own errors, not "expected an integer" for a table)
Batch = Annotated[
    Annotated[Rows, Tag("rows")] | Annotated[dict[Slot, Rows], Tag("by engine")],
    Discriminator(lambda v: "by engine" if isinstance(v, dict) else "rows"),
]
MAX_OPS = 1_000


class ColumnGroup(Strict):
    """``"field*" = { type = "text", count = 10 }``: the columns field0 .. field9."""

    type: TypeName
    count: Annotated[int, Field(gt=0, le=MAX_FIELDS)]


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


class MongodbTable(Strict):
    """The slot for MongoDB: the collection's secondary indexes (create_index)."""

    indexes: list[dict[str, Literal[1, -1]]] = Field(default_factory=list)


class Table(Strict):
    columns: Annotated[dict[str, TypeName | ColumnGroup], Field(min_length=1)]
    partition_key: Annotated[list[Name], Field(min_length=1)]
    clustering_key: list[Name] = Field(default_factory=list)
    cassandra: CassandraTable = Field(default_factory=CassandraTable)
    clickhouse: ClickhouseTable = Field(default_factory=ClickhouseTable)
    mongodb: MongodbTable | None = None

    def column_types(self) -> dict[str, str]:
        """Every column (groups expanded, in order) -> its portable type."""
        out: dict[str, str] = {}
        for name, typ in self.columns.items():
            if isinstance(typ, ColumnGroup):
                base = name.removesuffix("*")
                out.update({f"{base}{i}": typ.type for i in range(typ.count)})
            else:
                out[name] = typ
        return out

    def groups(self) -> dict[str, list[str]]:
        """Group name (without '*') -> its member columns."""
        return {
            name.removesuffix("*"): [f"{name.removesuffix('*')}{i}" for i in range(typ.count)]
            for name, typ in self.columns.items()
            if isinstance(typ, ColumnGroup)
        }


class MongodbOp(Strict):
    """The slot for MongoDB: one pymongo call; strings ":name" in
    filter/document/update/pipeline/limit are parameters (``mongodb_slot.py``,
    rendered by ``render_mongodb.py``)."""

    call: Literal[
        "find_one", "find", "insert_one", "insert_many", "update_one", "update_many",
        "replace_one", "delete_one", "delete_many", "aggregate", "count_documents",
    ]  # fmt: skip
    collection: str
    filter: dict[str, Any] = Field(default_factory=dict)
    document: dict[str, Any] | None = None
    update: dict[str, Any] | None = None
    pipeline: list[dict[str, Any]] | None = None
    sort: dict[str, Literal[1, -1]] | None = None
    limit: Annotated[int, Field(gt=0)] | str | None = None


class Op(Strict):
    weight: Weight = 1.0
    # rows per op, or per engine: { cassandra = 100, clickhouse = 10000 } (a CQL batch
    # over ~50 kB is refused; ClickHouse wants inserts of thousands of rows)
    batch: Batch = 1
    # "rows": a read that must find a row (an empty result is a miss, counted as an
    # error); "any": a write, or a read that may miss
    expect: Literal["any", "rows"] = "any"
    table: Name | None = None  # the table its parameters' columns are in
    key: KeyDraw | None = None  # the row's key number, shared by its gen = "key" bindings
    steps: Annotated[list[Name], Field(min_length=2, max_length=16)] | None = None
    cassandra: Statement | None = None
    clickhouse: Statement | None = None
    mongodb: MongodbOp | None = None
    bind: dict[str, Generator] = Field(default_factory=dict)

    @model_validator(mode="after")
    def _something(self) -> Op:
        statements = (self.cassandra, self.clickhouse, self.mongodb)
        if self.steps is not None and any(s is not None for s in statements):
            raise ValueError("an op with 'steps' runs other ops: it has no statement of its own")
        if self.steps is None and all(s is None for s in statements):
            raise ValueError("an op needs a statement (cassandra, clickhouse or mongodb) or steps")
        if isinstance(self.batch, dict):
            engines = [e for e, s in zip(SLOTS, statements, strict=True) if s is not None]
            stray = [e for e in self.batch if e not in engines]
            if stray:
                raise ValueError(f"batch gives rows for {', '.join(stray)}, which this op has "
                                 "no statement for")
            missing = [e for e in engines if e not in self.batch]
            if missing:
                raise ValueError(f"batch gives no rows for {', '.join(missing)} (a batch by "
                                 "engine names every engine the op has a statement for)")
        return self

    def rows(self, engine: str) -> int:
        """Rows per op on `engine` (a file's engine slot)."""
        if isinstance(self.batch, int):
            return self.batch
        return next((rows for slot, rows in self.batch.items() if slot == engine), 1)


class DataSet(Strict):
    """The user's data: a file, its format and the columns it has (with their types)."""

    file: Annotated[str, Field(min_length=1, max_length=4096)]
    format: Literal["csv", "parquet", "json"] | None = None  # default: by extension
    columns: Annotated[dict[str, TypeName], Field(min_length=1)]
    # a file outside the workload file's folder (an absolute path, ``..``, or a symlink
    # leading out) is refused unless this says so; `check` then prints where it reads
    allow_outside: bool = False

    def file_format(self) -> str | None:
        if self.format:
            return self.format
        suffix = self.file.rsplit(".", 1)[-1].lower() if "." in self.file else ""
        return {"csv": "csv", "parquet": "parquet", "json": "json", "jsonl": "json",
                "ndjson": "json"}.get(suffix)


VarValue = str | int | float | bool


class WorkloadFile(Strict):
    name: Annotated[str, Field(max_length=200)] | None = None
    description: Annotated[str, Field(max_length=10_000)] = ""
    # the op a load phase runs (its key numbers are the phase's slice); default: "insert"
    load: Name | None = None
    vars: dict[Name, VarValue] = Field(default_factory=dict)
    datasets: dict[Name, DataSet] = Field(default_factory=dict)
    tables: Annotated[dict[Name, Table], Field(min_length=1)]
    ops: Annotated[dict[Name, Op], Field(min_length=1, max_length=MAX_OPS)]

    def as_spec(self) -> dict[str, Any]:
        """The plain description that travels in the phase spec."""
        return self.model_dump(mode="json", by_alias=True, exclude_none=True)
