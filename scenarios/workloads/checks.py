"""What a workload file must get right beyond its keys' types, each one line naming
file, line and key: every statement parameter bound, every binding used, generators
that fit their columns, data-set columns that exist, references that resolve.

The result, `Checked`, knows each parameter's type: what a dialect's typed parameters
(``{name:Type}``) and a native binder need.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from loadtower.errors import ConfigError
from loadtower.scenarios.identifiers import NAME
from loadtower.scenarios.toml_lines import LineIndex, format_path
from loadtower.scenarios.workloads.file_slot import file_slots
from loadtower.scenarios.workloads.generators import (
    KEY_KINDS,
    DatasetColumn,
    OpKey,
    Written,
    value_kind,
)
from loadtower.scenarios.workloads.models import ColumnGroup, Op, Table, WorkloadFile
from loadtower.scenarios.workloads.rendering import WorkloadRendering, workload_rendering
from loadtower.scenarios.workloads.types import FITS, TYPES, kind_of

# a generator's own kind -> the parameter type it gives when nothing else does
_DEFAULT_TYPE = {
    "int": "int", "float": "double", "text": "text", "blob": "blob", "bool": "boolean",
    "uuid": "uuid", "timeuuid": "timeuuid", "timestamp": "timestamp", "date": "date",
}  # fmt: skip
Path = tuple[str | int, ...]


@dataclass
class Checked:
    """A validated workload file and what the checks worked out."""

    model: WorkloadFile
    file: str
    op_tables: dict[str, str] = field(default_factory=dict)  # op -> its table
    param_types: dict[str, dict[str, str]] = field(default_factory=dict)  # op -> param -> type
    param_columns: dict[str, dict[str, str]] = field(default_factory=dict)  # op -> param -> col
    params: dict[str, dict[str, list[str]]] = field(default_factory=dict)  # op -> engine -> names
    load_op: str | None = None  # the op a load phase runs: `load`, else the op "insert"


class _Fail:
    def __init__(self, source: str, file: str) -> None:
        self.index, self.file = LineIndex(source), file

    def __call__(self, path: Path, problem: str) -> ConfigError:
        return ConfigError(self.file, self.index.line_of(path), format_path(path), problem)


def check(model: WorkloadFile, source: str, file: str) -> Checked:
    fail = _Fail(source, file)
    for name, dataset in model.datasets.items():
        if dataset.file_format() is None:
            raise fail(("datasets", name, "file"), f"cannot tell the format of {dataset.file!r} "
                       "by its name: give format = \"csv\", \"parquet\" or \"json\"")
    for name, table in model.tables.items():
        _check_table(name, table, fail)
    out = Checked(model, file)
    for name, op in model.ops.items():
        _check_op(model, name, op, out, fail)
    for name, op in model.ops.items():
        for param, gen in op.bind.items():
            if isinstance(gen, Written):
                _check_written(model, name, param, gen, out, fail)
    out.load_op = _load_op(model, fail)
    return out


def _load_op(model: WorkloadFile, fail: _Fail) -> str | None:
    """The op a load phase runs: ``load``, else the op named ``insert`` (None: neither;
    a load phase of such a file is refused when the scenario loads)."""
    if model.load is None:
        return "insert" if "insert" in model.ops else None
    op = model.ops.get(model.load)
    if op is None or op.steps is not None:
        ops = [name for name, o in model.ops.items() if o.steps is None]
        raise fail(("load",), f"no op '{model.load}' with a statement (ops: {', '.join(ops)})")
    return model.load


def _check_table(name: str, table: Table, fail: _Fail) -> None:
    where: Path = ("tables", name)
    for column, typ in table.columns.items():
        group = column.endswith("*")
        if not NAME.fullmatch(column.removesuffix("*")):
            raise fail((*where, "columns", column), f"invalid column name {column!r}: a letter "
                       "or _, then letters, digits or _ (a group: the same, then *)")
        if group != isinstance(typ, ColumnGroup):
            raise fail((*where, "columns", column), "a column group is written "
                       '"name*" = { type = "...", count = N }, a column name = "type"')
    columns = table.column_types()
    for key in ("partition_key", "clustering_key"):
        for i, column in enumerate(getattr(table, key)):
            if column not in columns:
                raise fail((*where, key, i), _not_a_column(column, name, columns))
    for slot in file_slots():
        engine_key, spec = slot.name, table.slot(slot.name)
        for key in slot.column_keys if spec is not None else ():
            for i, column in enumerate(getattr(spec, key) or []):
                if column not in columns:
                    at = i if isinstance(getattr(spec, key), list) else column
                    raise fail((*where, engine_key, key, at), _not_a_column(column, name, columns))


def _not_a_column(column: str, table: str, columns: dict[str, str]) -> str:
    shown = ", ".join(list(columns)[:8]) + (", ..." if len(columns) > 8 else "")
    return f"'{column}' is not a column of table '{table}' (columns: {shown})"


def _statements(op: Op) -> Iterator[tuple[str, WorkloadRendering, object]]:
    """(slot, its rendering, the op's statement) of each slot the op has one in."""
    for slot in file_slots():
        statement = op.statement(slot.name)
        rendering = workload_rendering(slot.name) if statement is not None else None
        if rendering is not None:
            yield slot.name, rendering, statement


def _op_table(model: WorkloadFile, name: str, op: Op, fail: _Fail) -> str:
    if op.table is not None:
        if op.table not in model.tables:
            raise fail(("ops", name, "table"), f"no table '{op.table}' in [tables] "
                       f"({', '.join(model.tables)})")
        return op.table
    if len(model.tables) == 1:
        return next(iter(model.tables))
    for _, rendering, statement in _statements(op):
        named = rendering.op_table(statement, model.tables)
        if named is not None:
            return named
    raise fail(("ops", name), "name the op's table: table = \"...\" (the file has several)")


def _check_op(model: WorkloadFile, name: str, op: Op, out: Checked, fail: _Fail) -> None:
    where: Path = ("ops", name)
    if op.steps is not None:
        for i, step in enumerate(op.steps):
            target = model.ops.get(step)
            if target is None or step == name or target.steps is not None:
                raise fail((*where, "steps", i), f"'{step}' is not an op with a statement "
                           f"(ops: {', '.join(n for n, o in model.ops.items() if o.steps is None)})")
        return
    table_name = _op_table(model, name, op, fail)
    table = model.tables[table_name]
    columns, groups = table.column_types(), table.groups()
    out.op_tables[name] = table_name
    used: dict[str, None] = {}
    types: dict[str, str] = {}
    cols: dict[str, str] = {}
    out.params[name] = {}
    for engine, rendering, statement in _statements(op):
        bad = rendering.problem(statement, model.tables, groups, op.rows(engine))
        if bad:
            raise fail((*where, engine), bad)
        names = rendering.params(statement, groups)
        out.params[name][engine] = names
        for param in names:
            param = _bound_as(op, param, groups)
            if param not in op.bind:
                raise fail((*where, engine), f"parameter :{param} has no binding (add "
                           f"bind.{param} = {{ gen = \"...\" }})")
            used.setdefault(param)
        for param, context_column in rendering.contexts(statement, groups, columns):
            cols.setdefault(param, context_column)
    for param, gen in op.bind.items():
        bwhere = (*where, "bind", param)
        if param not in used:
            raise fail(bwhere, f"binds no parameter of the op's statements (parameters: "
                       f"{', '.join(':' + p for p in used) or 'none'})")
        if isinstance(gen, OpKey) and op.key is None:
            raise fail((*bwhere, "gen"), "gen = \"key\" renders the op's key number: give the "
                       "op a key, e.g. key = { gen = \"uniform\" }")
        members = groups.get(param.removesuffix("*"), []) if param.endswith("*") else []
        column = param if param in columns else cols.get(param)
        column = members[0] if members else column
        typ: str | None = gen.type or (columns[column] if column else None)
        if isinstance(gen, DatasetColumn):
            source_type = _dataset_type(model, gen, bwhere, fail)
            typ = typ or source_type
            _fits(kind_of(source_type), typ, param, column, bwhere, "dataset column", fail)
        own = value_kind(gen)
        if typ is None and own is not None:
            typ = _DEFAULT_TYPE[own]
        if typ is None and not isinstance(gen, Written):
            raise fail(bwhere, f"cannot tell the type of :{param}: name it after a column of "
                       f"table '{table_name}' or give type = \"...\" "
                       f"(one of {', '.join(TYPES)})")
        if typ is not None:
            if own is not None:
                _fits(own, typ, param, column, bwhere, f"generator '{gen.gen}'", fail)
            elif gen.gen != "dataset" and not isinstance(gen, Written):
                if kind_of(typ) not in KEY_KINDS:
                    raise fail((*bwhere, "gen"), f"generator '{gen.gen}' makes key values "
                               f"(numbers, text, uuid, timestamp), but :{param} is {typ}")
            types[param] = typ
        if column:
            cols[param] = column
    for group, members in groups.items():  # a group's binding binds each member
        if f"{group}*" in types:
            for member in members:
                types.setdefault(member, types[f"{group}*"])
                cols.setdefault(member, member)
    out.param_types[name] = types
    out.param_columns[name] = cols


def _bound_as(op: Op, param: str, groups: dict[str, list[str]]) -> str:
    """The binding that binds `param`: its own, else its column group's ("field*")."""
    if param in op.bind:
        return param
    for group, members in groups.items():
        if param in members and f"{group}*" in op.bind:
            return f"{group}*"
    return param


def _fits(kind: str, typ: str, param: str, column: str | None, where: Path, what: str,
          fail: _Fail) -> None:
    if kind_of(typ) in FITS[kind]:
        return
    of = f"column '{column}' of type {typ}" if column else f"of type {typ}"
    raise fail(where, f"{what} makes {kind} values, but :{param} is {of}")


def _dataset_type(model: WorkloadFile, gen: DatasetColumn, where: Path, fail: _Fail) -> str:
    if gen.dataset is None:
        if len(model.datasets) != 1:
            raise fail(where, "name the data set: dataset = \"...\" "
                       f"(declared: {', '.join(model.datasets) or 'none: add [datasets.NAME]'})")
        name = next(iter(model.datasets))
    else:
        name = gen.dataset
        if name not in model.datasets:
            raise fail((*where, "dataset"), f"no data set '{name}' "
                       f"(declared: {', '.join(model.datasets) or 'none'})")
    columns = model.datasets[name].columns
    if gen.column not in columns:
        raise fail((*where, "column"), f"data set '{name}' has no column '{gen.column}' "
                   f"(columns: {', '.join(columns)})")
    return columns[gen.column]


def _check_written(model: WorkloadFile, op: str, param: str, gen: Written, out: Checked,
                   fail: _Fail) -> None:
    where: Path = ("ops", op, "bind", param, "from")
    source_op, source_param = gen.from_.split(".", 1)
    source = model.ops.get(source_op)
    if source is None or source.steps is not None:
        raise fail(where, f"no op '{source_op}' with a statement")
    if source_param not in source.bind:
        raise fail(where, f"op '{source_op}' binds no parameter '{source_param}' "
                   f"(it binds: {', '.join(source.bind) or 'none'})")
    typ = out.param_types.get(source_op, {}).get(source_param)
    mine = out.param_types[op].get(param) or gen.type
    if typ and mine and kind_of(typ) != kind_of(mine):
        raise fail(where, f"{source_op}.{source_param} is {typ}, but :{param} is {mine}")
    if typ and param not in out.param_types[op]:
        out.param_types[op][param] = typ
