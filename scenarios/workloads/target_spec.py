"""A workload file rendered for one target: what a phase spec's ``workload_file`` holds
(protocol/workload_file_spec.py) and what ``loadtower check`` prints (one code path).

For the target's engine, as its package renders it (its slot's rendering: the kind's
``workload_file``, rendering.py): the DDL (the target's keyspace and replication, the
workload's table rename, the target keys only its engine takes, such as a table
engine, an order or skip indexes; a document store's collections and indexes), the
file's tables as qualified names, each op's statements with the driver's markers and
their parameters in order (or a call with its parameters' marks); here: each op's batch (a batch by engine: the target's),
expect and weight, ops made of steps, and the op a load phase runs. Agents take this as
it is: they never import a workload file's model.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from loadtower.errors import LoadtowerError
from loadtower.protocol.engine_kinds import KINDS, kind, titles
from loadtower.protocol.workload_file_spec import OpRunSpec, StatementSpec, WorkloadFileSpec
from loadtower.scenarios.crossref import workload_of
from loadtower.scenarios.models import Dataset, LoadPhase, Target, Workload
from loadtower.scenarios.workloads.bind_spec import workload_file_spec
from loadtower.scenarios.workloads.builtin_files import (
    builtin_checked,
    builtin_load_op,
    for_target,
)
from loadtower.scenarios.workloads.checks import Checked
from loadtower.scenarios.workloads.rendering import rendered_slots, workload_rendering

if TYPE_CHECKING:
    from loadtower.scenarios.plan import Plan

def file_engine(engine: str) -> str:
    """The statement slot of a scenario engine (its kind's dialect: a flavour runs its
family's slot)."""
    return kind(engine).dialect


def table_renames(checked: Checked, workload: Workload, target: Target | None = None
                  ) -> dict[str, str] | None:
    """The workload's ``table`` renames the file's table when it has only one; a built-in
    workload's table is also the target's ``table`` (as the engines named it)."""
    tables = checked.model.tables
    table = workload.table or (target.table if target is not None and workload.file is None
                               else None)
    return {next(iter(tables)): table} if table and len(tables) == 1 else None


def loaded_table(plan: Plan, index: int) -> str:
    """The table (collection, key prefix) the load phase at `index` writes, as the target
    names it: a workload file's load op's table after the workload's renames
    (`table_renames`), else the workload's or the target's ``table``, else usertable."""
    sc = plan.scenario
    name = workload_of(sc, index) or next(iter(sc.workloads))
    workload = sc.workloads[name]
    checked = plan.workloads.get(name)
    if checked is None or not checked.load_op:
        return workload.table or sc.target.table or "usertable"
    loaded = checked.op_tables[checked.load_op]
    return (table_renames(checked, workload, sc.target) or {}).get(loaded, loaded)


def run_ops(checked: Checked, statements: dict[str, list[StatementSpec]], slot: str
            ) -> dict[str, OpRunSpec]:
    """Each op that runs on the engine (ops with steps: when each step does)."""
    out: dict[str, OpRunSpec] = {}
    for name, op in checked.model.ops.items():
        if op.steps is not None:
            if all(step in statements for step in op.steps):
                out[name] = {"steps": list(op.steps), "weight": float(op.weight), "batch": 1,
                             "expect": "any"}
        elif name in statements:
            out[name] = {"statements": statements[name],
                         "batch": op.rows(slot), "expect": op.expect, "weight": float(op.weight)}
    return out


def batches_on(checked: Checked, slot: str) -> Checked:
    """`checked` with each op's batch as the one number of rows it has on `slot`."""
    ops = checked.model.ops
    if all(isinstance(op.batch, int) for op in ops.values()):
        return checked
    one = {name: op.model_copy(update={"batch": op.rows(slot)}) for name, op in ops.items()}
    return dataclasses.replace(checked, model=checked.model.model_copy(update={"ops": one}))


def render_for_target(checked: Checked, workload: Workload, engine: str, target: Target
                      ) -> WorkloadFileSpec:
    """The file as the agents of a target of `engine` run it (see the module docstring)."""
    slot = file_engine(engine)
    checked = batches_on(for_target(checked, slot, target), slot)
    spec = workload_file_spec(checked)
    spec.update({"engine": slot, "ddl": [], "tables": [], "run": {},
                 "load": builtin_load_op(workload, slot, checked.load_op)})
    rendering = workload_rendering(slot)
    if rendering is not None:
        names = rendering.names(checked, target.keyspace,
                                table_renames(checked, workload, target), target)
        spec.update({
            "ddl": rendering.ddl(checked, target, names),
            "tables": [rendering.qualified(names, t) for t in checked.model.tables],
            "run": run_ops(checked, rendering.statements(checked, names), slot),
        })
    return spec


def runnable(spec: WorkloadFileSpec, file: str, workload: str) -> WorkloadFileSpec:
    """`spec` when its engine runs workload files and it has an op to run, else one line."""
    if spec["engine"] not in rendered_slots():
        able = [k.name for k in KINDS.values() if k.dialect in rendered_slots()]
        raise LoadtowerError(f"{file}: workload '{workload}' on engine {spec['engine']}: "
                             f"workload files run on {titles(able)}")
    if not any(op.get("weight", 0) > 0 for op in spec["run"].values()):
        raise LoadtowerError(f"{file}: workload '{workload}': no op with a weight has a "
                             f"{spec['engine']} statement: nothing to run on this target")
    return spec


def check_runnable(plan: Plan) -> None:
    """Every workload file of the run renders and runs on each target that uses it (one
    line otherwise, before anything starts)."""
    for _name, target_plan in plan.target_plans():
        sc = target_plan.scenario
        loaded = {workload_of(sc, i) for i, p in enumerate(sc.phases) if isinstance(p, LoadPhase)}
        for name, checked in plan.workloads.items():
            spec = render_for_target(checked, sc.workloads[name], sc.engine, sc.target)
            runnable(spec, checked.file, name)
            if name in loaded and (spec["load"] or "") not in spec["run"]:
                raise LoadtowerError(f"{checked.file}: workload '{name}' is loaded on a "
                                     f"{sc.engine} target, but its load op "
                                     f"'{spec['load']}' has no {spec['engine']} statement")


def builtin_workload_file(engine: str, target: Target, dataset: Dataset, workload: Workload
                          ) -> WorkloadFileSpec:
    """A built-in workload (preset, schema, mix) as its shipped file rendered for a target
    of `engine`: what ``loadtower load --workload ycsb-a`` sends, and what tests build
    phase specs with."""
    checked = builtin_checked(dataset, workload, f"workload {workload.schema_name}")
    spec = render_for_target(checked, workload, engine, target)
    return runnable(spec, checked.file, workload.schema_name)


def phase_workload_file(plan: Plan, workload: str) -> WorkloadFileSpec | None:
    """The phase spec's ``workload_file`` for `workload` on the plan's (one) target."""
    checked = plan.workloads.get(workload)
    if checked is None:
        return None
    sc = plan.scenario
    spec = render_for_target(checked, sc.workloads[workload], sc.engine, sc.target)
    return runnable(spec, checked.file, workload)
