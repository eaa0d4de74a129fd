"""A workload file's ops on an agent: rows from the reference binder (``binder.py``),
sent through an engine's runner (``FileRunner``: ``engines/NAME/agent/file_runner.py``,
from its backend's ``file_runner``) as the orchestrator rendered them for the target
(``protocol/workload_file_spec.py``: statement text, bind order, insert heads).

- An op of ``batch = N`` binds N rows: a statement with a ``:[...]`` list is sent once
  (the list over the rows), an insert head (``insert_rows``) once with the N rows, any
  other statement as the engine's runner sends N rows (e.g. one batch of N).
- ``expect = "rows"``: an empty result is a `NoRows` error (the run's error table shows
  the class).
- ``steps``: the steps' statements in order, one key number, measured as one op.
- A load phase runs the file's load op over the phase's key numbers (``load``).
- Run phases: ``sequence`` key numbers start after the data set, the workers' interleaved
  (``interleaved``: worker w of W counts first + records + w*stride by W*stride), so the new
  keys of all workers together are dense and ``latest`` reads below a worker's newest
  key find what the others wrote.
"""

from __future__ import annotations

import copy
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from loadtower.agents.workload.binder import OpBinder, step_rows
from loadtower.agents.workload.generators import Context
from loadtower.protocol.workload_file_spec import (
    BindName,
    OpBindSpec,
    OpRunSpec,
    StatementSpec,
    WorkloadFileSpec,
)

Row = dict[str, Any]


class NoRows(LookupError):
    """A read with ``expect = "rows"`` found no row (a miss)."""


class FileRunner(Protocol):
    """One engine's way to prepare and send rendered statements."""

    async def prepare(self, statements: dict[str, StatementSpec]) -> None: ...
    def send(self, name: str, statement: StatementSpec, rows: list[Row]) -> Awaitable[Any]: ...
    def found(self, result: Any) -> bool: ...


def bind_value(bind: BindName, rows: list[Row]) -> Any:
    """A marker's value: a parameter of the (first) row, or a `:[...]` list's values
    over the rows (tuples for several names)."""
    if isinstance(bind, str):
        return rows[0][bind]
    if len(bind) == 1:
        return [row[bind[0]] for row in rows]
    return [tuple(row[name] for name in bind) for row in rows]


def has_list(statement: StatementSpec) -> bool:
    return any(not isinstance(b, str) for b in statement["binds"])


def positional(statement: StatementSpec, row: Row) -> tuple:
    """One row's values in the markers' order (positional `?` markers, an insert head's
    columns)."""
    return tuple(row[b] for b in statement["binds"] if isinstance(b, str))


def named(statement: StatementSpec, rows: list[Row]) -> dict[str, Any]:
    """Server-side parameters by name (``{name:Type}`` markers), a list's
    ``{a_b:Array(...)}`` by its names joined with ``_``."""
    return {(b if isinstance(b, str) else "_".join(b)): bind_value(b, rows)
            for b in statement["binds"]}


def _shifted(spec: OpBindSpec, offset: int, worker: int, workers: int) -> OpBindSpec:
    """The op's spec with every ``sequence`` of worker `worker` of `workers` counting
    from first + offset + worker*stride by workers*stride."""
    out = copy.deepcopy(spec)
    gens = [out["key"]] if "key" in out else []
    gens += list(out.get("bind", {}).values())
    for gen in gens:
        if gen.get("gen") == "sequence":
            stride = int(gen.get("stride", 1))
            gen["first"] = int(gen.get("first", 0)) + offset + worker * stride
            gen["stride"] = stride * workers
    return out


def interleaved(spec: WorkloadFileSpec, offset: int, worker: int, workers: int
                ) -> WorkloadFileSpec:
    """A run phase's spec for worker `worker` of `workers`: its sequences past `offset`
    (the data set's records), interleaved with the other workers' (``_shifted``); the
    Python ops and the Rust core's binder bind this same spec."""
    if not offset and workers == 1:
        return spec
    out = dict(spec)
    out["ops"] = {op: _shifted(bind, offset, worker, workers) for op, bind in spec["ops"].items()}
    return out  # type: ignore[return-value]  # the same keys as spec


def load_rows(run: OpRunSpec, insert_block: int) -> int:
    """Rows per load op: the load op's batch; an insert head's `insert_block` (the
    workload's batch_size) when the op binds one row."""
    batch = int(run.get("batch", 1))
    if batch > 1:
        return batch
    return insert_block if any(s["insert_rows"] for s in run.get("statements", [])) else 1


def statement_name(op: str, variant: int) -> str:
    return f"{op}/{variant}"


class FileOps:
    def __init__(self, spec: WorkloadFileSpec, runner: FileRunner, ctx: Context) -> None:
        self.runner, self.ctx, self.rng = runner, ctx, ctx.rng
        self.run_specs: dict[str, OpRunSpec] = spec["run"]
        self.load_op = spec.get("load")
        self.binders: dict[str, OpBinder] = {}
        for op, bind in spec["ops"].items():
            if op in self.run_specs:
                self.binders[op] = OpBinder(op, bind, ctx, self._fresh)

    def _fresh(self, op: str, param: str) -> Any:
        """``written`` before `op` wrote anything: a value `op` would write."""
        return self.binders[op].row()[param]

    def statements(self) -> dict[str, StatementSpec]:
        """Every statement to prepare, by its name (op/variant)."""
        return {statement_name(op, i): s for op, run in self.run_specs.items()
                for i, s in enumerate(run.get("statements", []))}

    def weights(self) -> dict[str, float]:
        return {op: run.get("weight", 1.0) for op, run in self.run_specs.items()
                if run.get("weight", 1.0) > 0}

    def table(self) -> dict[str, Callable[[], Awaitable[Any]]]:
        """op -> a zero-argument awaitable factory (what the engine's lanes call)."""
        return {op: (lambda op=op: self.run(op)) for op in self.run_specs}  # type: ignore[misc]

    async def run(self, op: str) -> None:
        run = self.run_specs[op]
        steps = run.get("steps")
        if steps:
            rows = step_rows([self.binders[s] for s in steps])
            for step, row in zip(steps, rows, strict=True):
                await self.send(step, [row])
            return
        binder = self.binders[op]
        await self.send(op, [binder.row() for _ in range(max(1, run.get("batch", 1)))])

    async def send(self, op: str, rows: list[Row]) -> Any:
        run = self.run_specs[op]
        statements = run["statements"]
        i = self.rng.randrange(len(statements)) if len(statements) > 1 else 0
        result = await self.runner.send(statement_name(op, i), statements[i], rows)
        if run.get("expect") == "rows" and not self.runner.found(result):
            raise NoRows(f"{op} found no row")
        return result

    def load_rows(self, insert_block: int) -> int:
        return load_rows(self.run_specs[self.load_op or ""], insert_block)

    def load(self, first: int, count: int) -> Awaitable[Any]:
        """One load op: the load op's rows of key numbers first .. first + count - 1."""
        binder = self.binders[self.load_op or ""]
        return self.send(binder.name, [binder.row(key=k) for k in range(first, first + count)])
