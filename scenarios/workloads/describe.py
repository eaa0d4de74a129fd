"""What ``loadtower check`` shows of a scenario's workload files: each table's DDL and
each op's statement per engine, its bindings, and an example row drawn by the
reference generators (seeded, so the same file shows the same row)."""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import datetime
from typing import Any
from uuid import UUID

from rich.console import Group
from rich.table import Table

from loadtower.agents.workload.binder import OpBinder
from loadtower.agents.workload.dataset_reader import DatasetError, DatasetReader
from loadtower.agents.workload.generators import Context
from loadtower.protocol.engine_kinds import dialects, kind
from loadtower.scenarios.models import Scenario, Target
from loadtower.scenarios.workloads.bind_spec import bind_specs
from loadtower.scenarios.workloads.checks import Checked
from loadtower.scenarios.workloads.models import Op
from loadtower.scenarios.workloads.target_spec import render_for_target
from loadtower.store.terminal_text import cell

EXAMPLE_SEED = 1
EXAMPLE_BATCH = 16  # data-set rows read at a time for the example rows
SHOWN_CHARS = 48


class NotHere(str):
    """An example value check cannot draw (a data set it cannot read)."""

    def __repr__(self) -> str:
        return f"({self})"


def shown(value: Any) -> str:
    if isinstance(value, datetime):
        text = value.isoformat()
    elif isinstance(value, UUID):
        text = str(value)
    else:
        text = repr(value)
    return text if len(text) <= SHOWN_CHARS else text[: SHOWN_CHARS - 3] + "..."


def example_datasets(checked: Checked) -> dict[str, Iterator[dict[str, Any]]]:
    """Each data set's rows from its first, as an agent draws them (the file check has
    read once already: its path is resolved and its values convert)."""
    return {
        name: _unread_is_missing(name, dataset.file, DatasetReader(
            dataset.file, dataset.file_format() or "", dict(dataset.columns),
            batch_rows=EXAMPLE_BATCH).cycle())
        for name, dataset in checked.model.datasets.items()
    }


def _unread_is_missing(name: str, file: str, rows: Iterator[dict[str, Any]]
                       ) -> Iterator[dict[str, Any]]:
    """`rows`, with a data set that cannot be read (empty, gone since the file check) as
    a LookupError: the example shows why instead of a value."""
    try:
        yield from rows
    except DatasetError as exc:
        raise LookupError(f"data set {name}: {str(exc).removeprefix(file + ': ')}") from None


def example_rows(checked: Checked, records: int) -> dict[str, tuple[dict[str, Any], int]]:
    """One row per op (ops with steps: none) and its key number, from the reference
    binder; data-set values from the data sets' first rows."""
    ctx = Context(random.Random(EXAMPLE_SEED), records, datasets=example_datasets(checked))
    specs = bind_specs(checked)
    binders: dict[str, OpBinder] = {}

    def source(op: str, param: str) -> Any:
        return binder(op).row(missing)[param]

    def binder(op: str) -> OpBinder:
        if op not in binders:
            binders[op] = OpBinder(op, specs[op], ctx, source)
        return binders[op]

    def missing(param: str, exc: LookupError) -> NotHere:
        return NotHere(str(exc).strip("'\""))

    return {op: (binder(op).row(missing), binder(op).key()) for op in specs}


def batch_text(op: Op) -> str:
    """" x100 rows", " x100 rows on ENGINE, x10000 on OTHER" (a batch by engine), or
    nothing."""
    if isinstance(op.batch, int):
        return f" x{op.batch} rows" if op.batch > 1 else ""
    each = [f"x{rows}" + (" rows" if i == 0 else "") + f" on {engine}"
            for i, (engine, rows) in enumerate(op.batch.items())]
    return " " + ", ".join(each)


def engines_of(scenario: Scenario) -> list[str]:
    engines = [t.engine for t in scenario.targets.values()] or [scenario.engine]
    out = [kind(e).dialect for e in engines]
    return list(dict.fromkeys(out))


def describe(name: str, checked: Checked, scenario: Scenario) -> Group:
    model = checked.model
    workload = scenario.workloads[name]
    engines = engines_of(scenario)
    records = int(model.vars.get("records", scenario.dataset.records))
    title = f"Workload {name}: file {checked.file}" + (
        f" ({model.description})" if model.description else "")
    ddl = Table(title=cell(title), title_justify="left")
    ddl.add_column("engine")
    ddl.add_column("tables")
    ops = Table(title=cell(f"Workload {name}: ops"), title_justify="left")
    for column in ("op", "weight", "engine", "statement"):
        ops.add_column(column)
    total = sum(op.weight for op in model.ops.values()) or 1.0
    rendered: dict[str, dict[str, list[str]]] = {}
    for engine in engines:
        spec = render_for_target(checked, workload, engine, _target_of(scenario, engine))
        if engine in dialects():
            ddl.add_row(cell(engine), cell("\n".join(spec["ddl"])))
            rendered[engine] = {op: [s["text"] for s in run["statements"]]
                                for op, run in spec["run"].items() if "statements" in run}
        else:
            ddl.add_row(cell(engine), cell("(workload files on this engine: later)"))
    for op_name, op in model.ops.items():
        weight = f"{op.weight / total:.0%}" + batch_text(op)
        if op.steps:
            ops.add_row(*map(cell, (op_name, weight, "all", "steps: " + " then ".join(op.steps)
                                    + " (one key)")))
            continue
        for engine in engines:
            statements = rendered.get(engine, {}).get(op_name)
            text = (
                "\n".join(statements[:2])
                + (f"\n... ({len(statements)} variants, one picked per op)"
                   if len(statements) > 2 else "")
                if statements else "(none: the op does not run on this engine)"
            )
            ops.add_row(*map(cell, (op_name, weight, engine, text)))
            weight = ""
    binds = Table(title=cell(f"Workload {name}: bindings and an example row"),
                  title_justify="left")
    for column in ("op", "parameter", "type", "generator", "example"):
        binds.add_column(column)
    rows = example_rows(checked, records)
    for op_name, (row, key) in rows.items():
        op = model.ops[op_name]
        if op.key is not None:
            binds.add_row(*map(cell, (op_name, "(row key)", "number", _generator(op.key),
                                      f"{key} (gen = \"key\" renders it)")))
        for param, value in row.items():
            gen = op.bind.get(param) or op.bind.get(_group_of(param, op.bind))
            binds.add_row(*map(cell, (
                op_name, f":{param}", checked.param_types[op_name].get(param, "?"),
                _generator(gen), shown(value),
            )))
    return Group(ddl, ops, binds)


def _target_of(scenario: Scenario, engine: str) -> Target:
    """The target of `engine` (its own keys over [target]'s), else [target]."""
    for target in scenario.targets.values():
        if kind(target.engine).dialect == engine:
            return target
    return scenario.target


def _group_of(param: str, bind: dict[str, Any]) -> str:
    for name in bind:
        if name.endswith("*") and param.startswith(name[:-1]) and param[len(name) - 1:].isdigit():
            return name
    return param


def _generator(gen: Any) -> str:
    if gen is None:
        return "?"
    data = gen.model_dump(mode="json", by_alias=True, exclude_none=True, exclude_unset=True)
    data.pop("gen", None)
    inner = ", ".join(f"{k} = {v!r}" for k, v in data.items())
    return f"{gen.gen}" + (f" ({inner})" if inner else "")
