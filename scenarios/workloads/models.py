"""The workload file model: tables, data sets, ops with one statement per engine,
bindings (``loadtower.scenarios.workloads.loader`` validates a file into it).

``[ops.X]`` and ``[tables.T]`` have one key per slot of the registered engines
(file_slot.py): the engines' packages give each slot's models, so `Table` and `Op` are
built here from the registry (``create_model``), typed as their bases for mypy.

A plain description: ``as_spec()`` (``model_dump``) is what travels to agents in the
phase spec; nothing in it is Python code.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, Discriminator, Field, Tag, create_model, model_validator

from loadtower.scenarios.models import MAX_BATCH, MAX_FIELDS, Name, Strict, Weight
from loadtower.scenarios.workloads.file_slot import file_slots, slot_names
from loadtower.scenarios.workloads.generators import Generator, KeyDraw
from loadtower.scenarios.workloads.types import TypeName

Rows = Annotated[int, Field(gt=0, le=MAX_BATCH)]
SLOTS: tuple[str, ...] = slot_names()  # the engines' slots, in the order of Op's fields
Slot = Literal[SLOTS]  # type: ignore[valid-type]  # one of SLOTS (built from the registry)
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


class TableBase(Strict):
    columns: Annotated[dict[str, TypeName | ColumnGroup], Field(min_length=1)]
    partition_key: Annotated[list[Name], Field(min_length=1)]
    clustering_key: list[Name] = Field(default_factory=list)

    def slot(self, name: str) -> BaseModel | None:
        """The table's ``[tables.T.NAME]`` (None: an optional slot the file leaves out)."""
        found: BaseModel | None = getattr(self, name, None)
        return found

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


class OpBase(Strict):
    weight: Weight = 1.0
    # rows per op, or per engine: { ENGINE = 100, OTHER = 10000 } (a batch statement of
    # one engine is refused over ~50 kB; another wants inserts of thousands of rows)
    batch: Batch = 1
    # "rows": a read that must find a row (an empty result is a miss, counted as an
    # error); "any": a write, or a read that may miss
    expect: Literal["any", "rows"] = "any"
    table: Name | None = None  # the table its parameters' columns are in
    key: KeyDraw | None = None  # the row's key number, shared by its gen = "key" bindings
    steps: Annotated[list[Name], Field(min_length=2, max_length=16)] | None = None
    # then one field per slot (statement_fields) and `bind` (the fields' order of a file)

    def statement(self, slot: str) -> Any:
        """The op's statement in `slot` (text, or the engine's model), or None."""
        return getattr(self, slot, None)

    @model_validator(mode="after")
    def _something(self) -> OpBase:
        statements = [self.statement(s) for s in SLOTS]
        if self.steps is not None and any(s is not None for s in statements):
            raise ValueError("an op with 'steps' runs other ops: it has no statement of its own")
        if self.steps is None and all(s is None for s in statements):
            raise ValueError(f"an op needs a statement ({_either(SLOTS)}) or steps")
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


def _either(names: tuple[str, ...]) -> str:
    return ", ".join(names[:-1]) + f" or {names[-1]}" if len(names) > 1 else "".join(names)


def _table_field(optional: bool, model: type[BaseModel]) -> Any:
    return (model | None, None) if optional else (model, Field(default_factory=model))


_Table = create_model(
    "Table", __base__=TableBase,
    **{s.name: _table_field(s.table_optional, s.table) for s in file_slots()})
_Op = create_model(  # type: ignore[call-overload]
    "Op", __base__=OpBase,
    **{s.name: (s.op | None, None) for s in file_slots()},
    bind=(dict[str, Generator], Field(default_factory=dict)))

if TYPE_CHECKING:
    Table = TableBase

    class Op(OpBase):
        bind: dict[str, Generator]
else:
    Table, Op = _Table, _Op


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
