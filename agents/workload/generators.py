"""The reference implementation of the workload-file generators (docs/workloads.md):
one function per generator, deterministic given the ``random.Random`` it is given
(``now`` and time-based uuids also read the clock it is given).

Key numbers come from the built-in distributions (``keys.chooser``: uniform, scrambled
zipfian, latest, hotspot), rendered by the parameter's type: text ``prefix + n``,
numbers ``n``, a uuid made of k (``fnv64(k) << 64 | k``, as the recipes schema's ids),
a timestamp ``start + n * step``; ``hash`` makes n YCSB's FNV-1a 64 of k, ``modulo``
n mod m. These are the values the built-in schemas' keys have (the engines'
agent/schemas.py).
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from itertools import count
from typing import Any

from loadtower.agents.workload.keys import chooser, fnv64
from loadtower.agents.workload.values import ValuePool
from loadtower.agents.workload.zipfian import Zipfian

MASK64 = (1 << 64) - 1
KEY_DRAWS = ("uniform", "zipfian", "latest", "hotspot")
_KINDS = {
    "text": "text", "ascii": "text", "blob": "blob", "boolean": "bool", "tinyint": "int",
    "smallint": "int", "int": "int", "bigint": "int", "float": "float", "double": "float",
    "uuid": "uuid", "timeuuid": "timeuuid", "timestamp": "timestamp", "date": "date",
}  # fmt: skip
Draw = Callable[[], Any]


def instant(text: str) -> datetime:
    value = datetime.fromisoformat(text)
    return value if value.tzinfo else value.replace(tzinfo=UTC)


def render_key(k: int, spec: dict[str, Any], type_name: str) -> Any:
    """Key number k as a value of `type_name` (see the module docstring)."""
    kind = _KINDS[type_name]
    if kind in ("uuid", "timeuuid"):
        return uuid.UUID(int=(fnv64(k) << 64) | (k & MASK64))
    n = fnv64(k) if spec.get("hash") else k
    if spec.get("modulo"):
        n %= int(spec["modulo"])
    if kind == "text":
        return f"{spec.get('prefix', '')}{n}"
    if kind == "float":
        return float(n)
    if kind == "timestamp":
        start = instant(spec.get("start", "2024-01-01T00:00:00+00:00"))
        return start + timedelta(seconds=n * float(spec.get("step", 1.0)))
    return n


class Context:
    """What generators share on one agent: the rng, the data set's size, the newest
    key, the clock, the values ops wrote (for ``written``), the data sets' rows (an
    iterator of dicts per data set name)."""

    def __init__(
        self,
        rng: random.Random,
        records: int,
        now: Callable[[], datetime] | None = None,
        datasets: dict[str, Iterator[dict[str, Any]]] | None = None,
    ) -> None:
        self.rng = rng
        self.records = records
        self.newest = max(0, records - 1)
        self.now = now or (lambda: datetime.now(UTC))
        self._pool: ValuePool | None = None
        self.datasets = datasets or {}
        self.written: dict[tuple[str, str], list[Any]] = {}
        # sequences by (first, stride): every op whose key counts from one start shares
        # its counter, so two inserting ops never write the same new key
        self.sequences: dict[tuple[int, int], Iterator[int]] = {}

    def dataset_row(self, name: str) -> dict[str, Any]:
        """The next row of data set `name` (LookupError when it is not loaded here).
        The iterators are the agent's (``dataset_reader.DatasetReader.cycle()`` in run
        phases: rows in turn, one batch in memory)."""
        rows = self.datasets.get(name)
        if rows is None:
            raise LookupError(f"data set {name} is not loaded here")
        try:
            return next(rows)
        except StopIteration:
            raise LookupError(f"data set {name} has no more rows") from None

    @property
    def pool(self) -> ValuePool:
        """The text pool (1 MiB from the rng, made at the first text drawn)."""
        if self._pool is None:
            self._pool = ValuePool(self.rng)
        return self._pool

    def key_draw(self, spec: dict[str, Any]) -> Draw:
        """A key number source: ``sequence`` counts from ``first`` by ``stride`` (on the
        counter every sequence of that start and stride shares), the distributions draw
        over [0, keys) (keys: the data set's records)."""
        if spec["gen"] == "sequence":
            first, stride = int(spec.get("first", 0)), int(spec.get("stride", 1))
            numbers = self.sequences.setdefault((first, stride), count(first, stride))
            return lambda: self._inserted(next(numbers))
        keys = int(spec.get("keys") or self.records)
        return chooser(spec["gen"], keys, lambda: self.newest, self.rng,
                       float(spec.get("hot_data", 0.2)), float(spec.get("hot_ops", 0.8)))

    def _inserted(self, k: int) -> int:
        self.newest = max(self.newest, k)
        return k


def _length(spec: Any, rng: random.Random) -> Callable[[], int]:
    if isinstance(spec, int):
        return lambda: spec
    low, high = int(spec.get("min", 1)), int(spec["max"])
    if spec.get("distribution") == "zipfian":
        z = Zipfian(high - low + 1, rng=rng)
        return lambda: low + z.next()
    return lambda: rng.randint(low, high)


def _fixed_text(ctx: Context, length: int) -> Draw:
    """Texts of one length from the context's pool (made at the first draw, as before)."""
    text: Callable[[int], str] | None = None

    def draw() -> str:
        nonlocal text
        if text is None:
            text = ctx.pool.text
        return text(length)

    return draw


def _coerce(value: Any, type_name: str) -> Any:
    kind = _KINDS[type_name]
    if kind == "float" and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    return value


def generator(
    spec: dict[str, Any], type_name: str, ctx: Context, op_key: Callable[[], int] | None = None,
    source: Callable[[str, str], Any] | None = None,
    dataset_row: Callable[[str], dict[str, Any]] | None = None,
) -> Draw:
    """A function giving the next value of the generator `spec` for a parameter of type
    `type_name`. `op_key`: the row's key number (``gen = "key"``); `source`: a fresh
    value of OP.PARAM (``written`` before that op wrote anything); `dataset_row`: the
    op row's row of a data set (``gen = "dataset"``)."""
    gen, rng = spec["gen"], ctx.rng
    if gen == "key":
        if op_key is None:
            raise ValueError("gen = 'key' needs the op's key")
        key = op_key
        return lambda: render_key(key(), spec, type_name)
    if gen == "sequence" or gen in KEY_DRAWS:
        draw = ctx.key_draw(spec)
        return lambda: render_key(draw(), spec, type_name)
    if gen == "int":
        low, high = int(spec.get("min", 0)), int(spec.get("max", 2**31 - 1))
        return lambda: _coerce(rng.randint(low, high), type_name)
    if gen == "float":
        lo, hi = float(spec.get("min", 0.0)), float(spec.get("max", 1.0))
        return lambda: rng.uniform(lo, hi)
    if gen in ("text", "blob"):
        length = spec.get("length", 100)
        if gen == "text" and isinstance(length, int):  # the common case: no size() call
            return _fixed_text(ctx, length)
        size = _length(length, rng)
        if gen == "blob":
            return lambda: ctx.pool.text(size()).encode()
        return lambda: ctx.pool.text(size())
    if gen == "uuid":
        if int(spec.get("version", 4)) == 1:
            return lambda: _uuid1(ctx)
        return lambda: uuid.UUID(int=rng.getrandbits(128), version=4)
    if gen == "timestamp":
        if spec.get("from") is None:
            return ctx.now
        first, last = instant(spec["from"]), instant(spec["to"])
        span = (last - first).total_seconds()
        return lambda: first + timedelta(seconds=rng.random() * span)
    if gen == "choice":
        return _choice(spec, type_name, rng)
    if gen == "constant":
        value = _coerce(spec["value"], type_name)
        return lambda: value
    if gen == "written":
        return _written(spec, ctx, source)
    if gen == "dataset":
        return _dataset(spec, ctx, dataset_row)
    raise ValueError(f"unknown generator {gen!r}")


def _uuid1(ctx: Context) -> uuid.UUID:
    """A time-based uuid (version 1) of the context's clock, node and sequence from its rng."""
    when = ctx.now()
    ticks = int((when - datetime(1582, 10, 15, tzinfo=UTC)).total_seconds() * 10**7)
    low, mid, high = ticks & 0xFFFFFFFF, (ticks >> 32) & 0xFFFF, (ticks >> 48) & 0x0FFF
    seq, node = ctx.rng.getrandbits(14), ctx.rng.getrandbits(48)
    return uuid.UUID(fields=(low, mid, high | 0x1000, 0x80 | (seq >> 8), seq & 0xFF, node))


def _choice(spec: dict[str, Any], type_name: str, rng: random.Random) -> Draw:
    values = [_coerce(v, type_name) for v in spec["values"]]
    weights = spec.get("weights") or [1.0] * len(values)
    total = float(sum(weights))
    edges, acc = [], 0.0
    for w in weights:
        acc += w / total
        edges.append(acc)
    edges[-1] = 1.0

    def pick() -> Any:
        u = rng.random()
        for value, edge in zip(values, edges, strict=True):
            if u < edge:
                return value
        return values[-1]

    return pick


def _written(spec: dict[str, Any], ctx: Context, source: Callable[[str, str], Any] | None) -> Draw:
    op, param = spec["from"].split(".", 1)
    window = int(spec.get("window", 10_000))
    seen = ctx.written.setdefault((op, param), [])

    def pick() -> Any:
        if seen:
            recent = seen[-window:]
            return recent[ctx.rng.randrange(len(recent))]
        if source is None:
            raise LookupError(f"{op} has not written {param} yet")
        return source(op, param)

    return pick


def _dataset(spec: dict[str, Any], ctx: Context,
             current: Callable[[str], dict[str, Any]] | None) -> Draw:
    """A column of the data set's current row: `current(name)` is the row the binder
    drew for this op row (every data-set binding of one row reads the same file row);
    without one, each value is the next row's."""
    name = spec.get("dataset") or next(iter(ctx.datasets), None) or ""
    column = spec["column"]
    row_of = current or ctx.dataset_row

    def pick() -> Any:
        return row_of(name)[column]

    return pick


def remember(ctx: Context, op: str, row: dict[str, Any], keep: int = 1_000_000) -> None:
    """Record the values op `op` wrote (what ``written`` draws from), at most `keep`
    per parameter (the oldest go first)."""
    if not ctx.written:  # no op draws `written` values: nothing to keep
        return
    for param, value in row.items():
        seen = ctx.written.get((op, param))
        if seen is not None:
            seen.append(value)
            if len(seen) > keep:
                del seen[: len(seen) - keep]
