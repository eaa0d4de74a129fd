"""A checked workload file's ops as plain binder specs (protocol/workload_file_spec.py):
what travels to agents and what the reference binder (agents/workload/binder.py) takes."""

from __future__ import annotations

from typing import Any

from loadtower.protocol.workload_file_spec import OpBindSpec, WorkloadFileSpec
from loadtower.scenarios.workloads.checks import Checked


def _plain(model: Any) -> dict[str, Any]:
    return dict(model.model_dump(mode="json", by_alias=True, exclude_none=True))


def _bound(checked: Checked, gen: Any) -> dict[str, Any]:
    """The generator's plain spec; a data-set column names its data set."""
    spec = _plain(gen)
    if spec["gen"] == "dataset" and "dataset" not in spec:
        spec["dataset"] = next(iter(checked.model.datasets))
    return spec


def op_bind_spec(checked: Checked, op: str) -> OpBindSpec:
    model = checked.model.ops[op]
    table = checked.model.tables[checked.op_tables[op]]
    spec: OpBindSpec = {
        "bind": {param: _bound(checked, gen) for param, gen in model.bind.items()},
        "types": dict(checked.param_types[op]),
        "groups": table.groups(),
        # a batch by engine is one number once rendered for a target (target_spec's
        # batches_on); before that (check's example row) an op binds one row
        "batch": model.batch if isinstance(model.batch, int) else 1,
    }
    if model.key is not None:
        spec["key"] = _plain(model.key)
    return spec


def bind_specs(checked: Checked) -> dict[str, OpBindSpec]:
    """Every op with a statement (ops with steps run those)."""
    return {op: op_bind_spec(checked, op) for op, m in checked.model.ops.items() if m.steps is None}


def workload_file_spec(checked: Checked) -> WorkloadFileSpec:
    """What a phase spec's ``workload_file`` holds for this file."""
    return {"model": checked.model.as_spec(), "ops": bind_specs(checked)}
