"""A built-in workload (``schema = "ycsb" | "recipes" | "ttl"``, a preset or a ``mix``)
as the workload file shipped for its schema (scenarios/builtin/workloads/), so that it
runs on the same path as a user's file (docs/workloads.md, "The built-in workload files").

The scenario's settings become the file's variables (``dataset.records``, ``fields``,
``field_size``; the workload's ``distribution``, ``batch_size``, ``scan_length``, ``ttl``,
``bloom_filter_fp_chance``, hotspot fractions), its mix the ops' weights (an op the mix
does not name: weight 0). ``bloom_filter_fp_chance`` on a schema whose file has no such
variable (ycsb, recipes) becomes an option of the file's table in the slots that have
one, as the engines' own DDL had it (the slot's ``tune_builtin``). A target whose slot
has mutation variants (``update_mode = "mutation"``) runs an op's ``OP_mutation`` (the
file's ``update_mutation``) as OP: ``for_target``. A built-in's load on an engine with
block loads (its kind's ``block_load``) runs the file's ``insert_batch`` (blocks of
``batch_size`` rows, the op name the engines' code gave those blocks): ``builtin_load_op``.
"""

from __future__ import annotations

import dataclasses
import functools
from importlib import resources
from pathlib import Path
from typing import Any

from loadtower.errors import ConfigError
from loadtower.protocol.engine_kinds import kind
from loadtower.scenarios.models import Dataset, Target, Workload
from loadtower.scenarios.presets import SCHEMAS
from loadtower.scenarios.workloads.checks import Checked
from loadtower.scenarios.workloads.file_slot import file_slots, slot_named
from loadtower.scenarios.workloads.loader import load_workload_file
from loadtower.scenarios.workloads.variables import Scalar

BUILTIN_PACKAGE = "loadtower.scenarios.builtin.workloads"
MUTATION = "_mutation"  # OP_mutation: OP on a target with update_mode "mutation"


def builtin_path(schema: str) -> Path:
    return Path(str(resources.files(BUILTIN_PACKAGE) / f"{schema}.toml"))


@functools.cache
def schemas_on(slot: str) -> tuple[str, ...]:
    """The built-in schemas whose shipped file has statements in `slot` (with what the
    engines add to it): the schemas a built-in workload can have on its engines."""
    found = []
    for schema in dict.fromkeys(SCHEMAS.values()):
        ops = load_workload_file(builtin_path(schema)).model.ops.values()
        if any(op.statement(slot) is not None for op in ops):
            found.append(schema)
    return tuple(found)


def builtin_vars(dataset: Dataset, workload: Workload, declared: dict[str, Any]
                 ) -> dict[str, Scalar]:
    """The scenario's settings as the values of the variables the file declares."""
    given: dict[str, Scalar | None] = {
        "records": dataset.records,
        "fields": dataset.fields,
        "field_size": dataset.field_size,
        "distribution": workload.distribution,
        "batch_size": workload.batch_size,
        "scan_length": workload.scan_length,
        "ttl": int(workload.ttl) if workload.ttl is not None else None,
        "bloom_filter_fp_chance": workload.bloom_filter_fp_chance,
        "hot_data": workload.hotspot_data_fraction,
        "hot_ops": workload.hotspot_op_fraction,
    }
    return {k: v for k, v in given.items() if k in declared and v is not None}


def builtin_checked(dataset: Dataset, workload: Workload, where: str) -> Checked:
    """The shipped file of the workload's schema, with the scenario's values and mix."""
    schema = workload.schema_name
    path = builtin_path(schema)
    declared = load_workload_file(path).model.vars
    checked = load_workload_file(path, builtin_vars(dataset, workload, declared))
    model = checked.model
    unknown = [op for op, w in workload.mix.items() if w > 0 and op not in model.ops]
    if unknown:
        raise ConfigError(where, None, "mix", f"the {schema} schema has no op "
                          f"{', '.join(unknown)} (ops: {', '.join(runnable_ops(checked))})")
    ops = {name: op.model_copy(update={"weight": float(workload.mix.get(name, 0))})
           for name, op in model.ops.items()}
    tables = dict(model.tables)
    for slot in file_slots():
        for name, table in tables.items():
            own = table.slot(slot.name)
            if slot.tune_builtin is not None and own is not None:
                tuned = slot.tune_builtin(own, workload, declared)
                tables[name] = table.model_copy(update={slot.name: tuned})
    checked.model = model.model_copy(update={"ops": ops, "tables": tables})
    return checked


def runnable_ops(checked: Checked) -> list[str]:
    """The ops a mix may name (not the ``OP_mutation`` variants)."""
    return [op for op in checked.model.ops if not op.endswith(MUTATION)]


def for_target(checked: Checked, engine: str, target: Target) -> Checked:
    """`checked` as it runs on a target of slot `engine`: where the slot says the target
    runs mutation variants (its `mutation_variants`, e.g. a target's ``update_mode =
    "mutation"``), each op OP that has an ``OP_mutation`` with a statement in the slot runs
    that statement under OP's name (and weight); the ``OP_mutation`` ops themselves never
    run under their own name."""
    ops = checked.model.ops
    variants = [op for op in ops if op.endswith(MUTATION) and op[: -len(MUTATION)] in ops]
    if not variants:
        return checked
    slot = slot_named(engine)
    mutation = slot is not None and slot.mutation_variants is not None \
        and slot.mutation_variants(target)
    per_op = ("op_tables", "param_types", "param_columns", "params")
    out: dict[str, dict[str, Any]] = {f: dict(getattr(checked, f)) for f in per_op}
    new_ops = dict(ops)
    for variant in variants:
        base = variant[: -len(MUTATION)]
        if mutation and ops[variant].statement(engine) is not None:
            new_ops[base] = ops[variant].model_copy(update={"weight": ops[base].weight})
            for f in per_op:
                if variant in out[f]:
                    out[f][base] = out[f][variant]
        del new_ops[variant]
        for f in per_op:
            out[f].pop(variant, None)
    model = checked.model.model_copy(update={"ops": new_ops})
    return dataclasses.replace(
        checked, model=model, op_tables=out["op_tables"], param_types=out["param_types"],
        param_columns=out["param_columns"], params=out["params"])


def builtin_load_op(workload: Workload, engine: str, load: str | None) -> str | None:
    """The op a built-in workload's load phase runs on `engine` (a file's: its own): on an
    engine of block loads, insert_batch blocks."""
    if workload.file is None and kind(engine).block_load:
        return "insert_batch"
    return load
