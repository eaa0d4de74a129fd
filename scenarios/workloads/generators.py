"""The generators a statement parameter can be bound to (``bind.NAME = { gen = ... }``).

Each is a plain table in the file and a plain dict in the phase spec, so a native
binder can implement it; ``loadtower.agents.workload.generators`` is the reference
implementation (deterministic given a seed). docs/workloads.md lists them.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import Field, field_validator, model_validator

from loadtower.scenarios.durations import parse_duration
from loadtower.scenarios.models import MAX_FIELD_SIZE, MAX_RECORDS, Strict
from loadtower.scenarios.workloads.types import TypeName

KeyCount = Annotated[int, Field(gt=0, le=MAX_RECORDS)]
Fraction = Annotated[float, Field(gt=0, lt=1)]
Length = Annotated[int, Field(ge=0, le=MAX_FIELD_SIZE)]
MAX_CHOICES = 10_000


def _instant(value: str) -> str:
    try:
        datetime.fromisoformat(value)
    except ValueError:
        raise ValueError(f"not an ISO 8601 time: {value!r} (e.g. 2024-01-01T00:00:00Z)") from None
    return value


class _Gen(Strict):
    type: TypeName | None = None  # the parameter's type when no column tells it


class _KeyRender(_Gen):
    """How a key number k becomes a value: prefix + k (text), k (numbers), a uuid made
    of k, or start + k * step (timestamps); ``hash`` uses YCSB's FNV-1a 64 of k,
    ``modulo`` k mod m."""

    prefix: Annotated[str, Field(max_length=256)] = ""
    hash: bool = False
    modulo: Annotated[int, Field(gt=0, le=MAX_RECORDS)] | None = None
    start: str = "2024-01-01T00:00:00+00:00"
    step: float = 1.0  # seconds

    @field_validator("start")
    @classmethod
    def _start(cls, value: str) -> str:
        return _instant(value)

    @field_validator("step", mode="before")
    @classmethod
    def _step(cls, value: object) -> float:
        return parse_duration(value)


class Sequence(_KeyRender):
    """New key numbers: first, first + stride, ... (a run phase's workers interleave
    theirs: docs/workloads.md, Keys)."""

    gen: Literal["sequence"]
    first: Annotated[int, Field(ge=0, le=MAX_RECORDS)] = 0
    stride: Annotated[int, Field(ge=1, le=1_000_000)] = 1


class KeySpace(_KeyRender):
    """A key number drawn over [0, keys) as the built-in distributions draw it (keys
    defaults to the data set's records); hot_data / hot_ops: hotspot's fractions."""

    gen: Literal["uniform", "zipfian", "latest", "hotspot"]
    keys: KeyCount | None = None
    hot_data: Fraction = 0.2
    hot_ops: Fraction = 0.8


class OpKey(_KeyRender):
    """The op's own key number of this row (its ``key``): several parameters share it."""

    gen: Literal["key"]


class IntRange(_Gen):
    gen: Literal["int"]
    min: int = 0
    max: int = 2**31 - 1

    @model_validator(mode="after")
    def _ordered(self) -> IntRange:
        if self.min > self.max:
            raise ValueError(f"min {self.min} is above max {self.max}")
        return self


class FloatRange(_Gen):
    gen: Literal["float"]
    min: float = 0.0
    max: float = 1.0

    @model_validator(mode="after")
    def _ordered(self) -> FloatRange:
        if self.min > self.max:
            raise ValueError(f"min {self.min:g} is above max {self.max:g}")
        return self


class LengthRange(Strict):
    min: Length = 1
    max: Length
    distribution: Literal["uniform", "zipfian"] = "uniform"

    @model_validator(mode="after")
    def _ordered(self) -> LengthRange:
        if self.min > self.max:
            raise ValueError(f"min {self.min} is above max {self.max}")
        return self


class Text(_Gen):
    """Random letters and digits (text) or bytes (blob), of a fixed or drawn length."""

    gen: Literal["text", "blob"]
    length: Length | LengthRange = 100


class Uuid(_Gen):
    gen: Literal["uuid"]
    version: Literal[1, 4] = 4  # 1: time-based (a timeuuid), 4: random


class Timestamp(_Gen):
    """``now`` (the clock at bind time), or uniform in [from, to]."""

    gen: Literal["timestamp"]
    from_: str | None = Field(default=None, alias="from")
    to: str | None = None

    @field_validator("from_", "to")
    @classmethod
    def _iso(cls, value: str | None) -> str | None:
        return None if value is None else _instant(value)

    @model_validator(mode="after")
    def _both(self) -> Timestamp:
        if (self.from_ is None) != (self.to is None):
            raise ValueError("give both 'from' and 'to' (a range), or neither (now)")
        if self.from_ and self.to and datetime.fromisoformat(self.from_) > datetime.fromisoformat(
            self.to
        ):
            raise ValueError(f"'from' {self.from_} is after 'to' {self.to}")
        return self


Scalar = str | int | float | bool


class Choice(_Gen):
    """One of ``values``, with ``weights`` (default: equal)."""

    gen: Literal["choice"]
    values: Annotated[list[Scalar], Field(min_length=1, max_length=MAX_CHOICES)]
    weights: Annotated[list[Annotated[float, Field(ge=0)]], Field(max_length=MAX_CHOICES)] | None = (
        None
    )

    @model_validator(mode="after")
    def _weights(self) -> Choice:
        kinds = {_scalar_kind(v) for v in self.values}
        if len(kinds - {"int"} if kinds == {"int", "float"} else kinds) > 1:
            raise ValueError("values must all be of one type (text, numbers or booleans)")
        if self.weights is not None:
            if len(self.weights) != len(self.values):
                raise ValueError(
                    f"{len(self.weights)} weights for {len(self.values)} values: give one each"
                )
            if sum(self.weights) <= 0:
                raise ValueError("the weights need at least one above 0")
        return self


class Constant(_Gen):
    gen: Literal["constant"]
    value: Scalar


class Written(_Gen):
    """A value an earlier insert bound: ``from = "OP.PARAM"`` (one of the last ``window``
    values op OP bound to PARAM on this agent)."""

    gen: Literal["written"]
    from_: Annotated[str, Field(pattern=r"^[A-Za-z_][A-Za-z0-9_]*\.[A-Za-z_][A-Za-z0-9_]*$")] = (
        Field(alias="from")
    )
    window: Annotated[int, Field(gt=0, le=1_000_000)] = 10_000


class DatasetColumn(_Gen):
    """A column of the user's data set (``[datasets.NAME]``), row after row."""

    gen: Literal["dataset"]
    column: str
    dataset: str | None = None  # needed when the file declares several data sets


Generator = Annotated[
    Sequence | KeySpace | OpKey | IntRange | FloatRange | Text | Uuid | Timestamp
    | Choice | Constant | Written | DatasetColumn,
    Field(discriminator="gen"),
]
GENERATORS = (
    "sequence", "uniform", "zipfian", "latest", "hotspot", "key", "int", "float", "text",
    "blob", "uuid", "timestamp", "choice", "constant", "written", "dataset",
)  # fmt: skip
KEY_GENERATORS = ("sequence", "uniform", "zipfian", "latest", "hotspot", "key")
KeyDraw = Annotated[Sequence | KeySpace, Field(discriminator="gen")]


def _scalar_kind(value: Scalar) -> str:
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    return "text"


def value_kind(gen: Sequence | KeySpace | OpKey | IntRange | FloatRange | Text | Uuid
               | Timestamp | Choice | Constant | Written | DatasetColumn) -> str | None:
    """The kind of value a generator makes by itself (None: it depends on its column)."""
    if isinstance(gen, IntRange):
        return "int"
    if isinstance(gen, FloatRange):
        return "float"
    if isinstance(gen, Text):
        return gen.gen
    if isinstance(gen, Uuid):
        return "timeuuid" if gen.version == 1 else "uuid"
    if isinstance(gen, Timestamp):
        return "timestamp"
    if isinstance(gen, Choice):
        kinds = {_scalar_kind(v) for v in gen.values}
        return "float" if "float" in kinds else kinds.pop()
    if isinstance(gen, Constant):
        return _scalar_kind(gen.value)
    return None


# what a key number can become (the kinds _KeyRender renders)
KEY_KINDS = frozenset({"int", "float", "text", "uuid", "timestamp"})
