"""A workload file rendered for one target: what a phase spec's ``workload_file`` holds
(protocol/workload_file_spec.py) and what ``loadtower check`` prints (one code path).

For the target's engine: the DDL (the target's keyspace and replication, the workload's
table rename, a ClickHouse target's table_engine / order_by / skip_indexes; MongoDB's
collections and indexes), the file's tables as qualified names, each op's statements
with the driver's markers and their parameters in order (MongoDB: the call with its
parameters' marks, ``render_mongodb.py``), its batch (a batch by engine: the target's),
expect and weight, ops made of
steps, and the op a load phase runs. Agents take this as it is: they never import a
workload file's model.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from loadtower.engines.cassandra.agent.schemas import cql_name
from loadtower.engines.clickhouse.agent.schemas import sql_name
from loadtower.errors import LoadtowerError
from loadtower.protocol.engine_kinds import dialects, kind
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
from loadtower.scenarios.workloads.op_statements import (
    engine_names,
    op_statements,
    param_engine_types,
)
from loadtower.scenarios.workloads.render_ddl import clickhouse_ddl, cql_ddl
from loadtower.scenarios.workloads.render_mongodb import mongodb_ddl, mongodb_statements
from loadtower.scenarios.workloads.render_statements import Names, Rendered

if TYPE_CHECKING:
    from loadtower.scenarios.plan import Plan

def file_engine(engine: str) -> str:
    """The statement slot of a scenario engine: Cassandra and ScyllaDB run `cassandra`."""
    return kind(engine).dialect


def table_renames(checked: Checked, workload: Workload, target: Target | None = None
                  ) -> dict[str, str] | None:
    """The workload's ``table`` renames the file's table when it has only one; a built-in
    workload's table is also the target's ``table`` (as the engines named it)."""
    tables = checked.model.tables
    table = workload.table or (target.table if target is not None and workload.file is None
                               else None)
    return {next(iter(tables)): table} if table and len(tables) == 1 else None


def target_ddl(checked: Checked, engine: str, target: Target, names: Names) -> list[str]:
    tables = checked.model.tables
    if engine == "cassandra":
        return cql_ddl(tables, names, target.replication or target.replication_factor)
    if engine == "clickhouse":
        indexes = ({k: str(v) for k, v in target.skip_indexes.items()}
                   if target.skip_indexes is not None else None)
        return clickhouse_ddl(tables, names, target.table_engine, target.order_by, indexes)
    if engine == "mongodb":
        return mongodb_ddl(tables, names)
    return []


def _qualified(engine: str, names: Names, table: str) -> str:
    if engine == "mongodb":  # a collection of the target's database
        return names.tables.get(table, table)
    quote = sql_name if engine == "clickhouse" else cql_name
    return f"{quote(names.keyspace)}.{quote(names.tables.get(table, table))}"


def _statement(r: Rendered, types: dict[str, str]) -> StatementSpec:
    binds = [b if isinstance(b, str) else list(b) for b in r.binds]
    names = {n for b in r.binds for n in ((b,) if isinstance(b, str) else b)}
    return {"text": r.text, "binds": binds, "insert_rows": r.insert_rows,
            "types": {n: t for n, t in types.items() if n in names}}


def rendered_statements(checked: Checked, engine: str, names: Names
                        ) -> dict[str, list[StatementSpec]]:
    """op -> its statements on `engine` as the agents take them (ops without: absent)."""
    if engine == "mongodb":
        return mongodb_statements(checked, names)
    if engine not in dialects():
        return {}
    out = {}
    for name, rendered in op_statements(checked, engine, names).items():
        types = param_engine_types(checked, name, engine)
        out[name] = [_statement(r, types) for r in rendered]
    return out


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
    names = engine_names(checked, target.keyspace, table_renames(checked, workload, target),
                         target.table_engine)
    spec = workload_file_spec(checked)
    statements = rendered_statements(checked, slot, names)
    spec.update({
        "engine": slot,
        "ddl": target_ddl(checked, slot, target, names),
        "tables": [_qualified(slot, names, t) for t in checked.model.tables],
        "run": run_ops(checked, statements, slot),
        "load": builtin_load_op(workload, slot, checked.load_op),
    })
    return spec


def runnable(spec: WorkloadFileSpec, file: str, workload: str) -> WorkloadFileSpec:
    """`spec` when its engine runs workload files and it has an op to run, else one line."""
    if spec["engine"] not in dialects():
        raise LoadtowerError(f"{file}: workload '{workload}' on engine {spec['engine']}: "
                             "workload files run on Cassandra, ScyllaDB, ClickHouse and "
                             "MongoDB")
    if not any(op.get("weight", 0) > 0 for op in spec["run"].values()):
        raise LoadtowerError(f"{file}: workload '{workload}': no op with a weight has a "
                             f"{spec['engine']} statement: nothing to run on this target")
    return spec


def check_runnable(plan: Plan) -> None:
    """Every workload file of the run renders and runs on each target that uses it (one
    line otherwise, before anything starts)."""
    from loadtower.scenarios.orchestrator.targets import target_plans

    for _name, target_plan in target_plans(plan):
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
