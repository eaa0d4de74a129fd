"""A scenario's workloads as checked workload files: ``[workloads.NAME] file = "..."``
found (relative to the scenario, or a built-in workload file's name), loaded with the
scenario's settings as its variables, its ops' weights replaced by ``weights``; a
built-in workload (a preset, ``schema``, ``mix``) as its schema's shipped file
(``builtin_files.py``). Every workload of a scenario runs as a workload file."""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

from loadtower.errors import ConfigError
from loadtower.scenarios.crossref import workload_of
from loadtower.scenarios.models import LoadPhase, Scenario, Workload
from loadtower.scenarios.toml_lines import LineIndex, format_path
from loadtower.scenarios.workloads.builtin_files import BUILTIN_PACKAGE, builtin_checked
from loadtower.scenarios.workloads.checks import Checked
from loadtower.scenarios.workloads.loader import load_workload_file
from loadtower.scenarios.workloads.variables import Scalar

# the workload's own keys that set a workload file's variable of the same name
WORKLOAD_VARS = {
    "distribution": "distribution", "batch_size": "batch_size", "scan_length": "scan_length",
    "ttl": "ttl", "hotspot_data_fraction": "hot_data", "hotspot_op_fraction": "hot_ops",
}  # fmt: skip


def builtin_workload_names() -> list[str]:
    folder = resources.files(BUILTIN_PACKAGE)
    return sorted(p.name[:-5] for p in folder.iterdir() if p.name.endswith(".toml"))


def resolve_workload_file(value: str, scenario_path: Path) -> Path | None:
    path = Path(value).expanduser()
    if not path.is_absolute():
        path = scenario_path.parent / path
    if path.exists():
        return path
    if value in builtin_workload_names():
        return Path(str(resources.files(BUILTIN_PACKAGE) / f"{value}.toml"))
    return None


def _overrides(scenario: Scenario, workload: Workload, declared: dict[str, Any]
               ) -> dict[str, Scalar]:
    out: dict[str, Scalar] = {}
    for key in ("records", "fields", "field_size"):
        if key in declared:
            out[key] = getattr(scenario.dataset, key)
    for key, var in WORKLOAD_VARS.items():
        value = getattr(workload, key)
        if key in workload.model_fields_set and var in declared and value is not None:
            out[var] = int(value) if key == "ttl" else value
    out.update(workload.vars)
    return out


def load_scenario_workloads(scenario: Scenario, scenario_path: Path, source: str
                            ) -> dict[str, Checked]:
    index = LineIndex(source)

    def fail(path: tuple[str | int, ...], problem: str) -> ConfigError:
        return ConfigError(str(scenario_path), index.line_of(path), format_path(path), problem)

    out: dict[str, Checked] = {}
    for name, workload in scenario.workloads.items():
        if workload.file is None:  # a built-in: its schema's shipped file
            out[name] = builtin_checked(scenario.dataset, workload, str(scenario_path))
            continue
        path = resolve_workload_file(workload.file, scenario_path)
        if path is None:
            raise fail(("workloads", name, "file"), f"no such workload file {workload.file!r} "
                       f"(relative to the scenario), nor a built-in one "
                       f"({', '.join(builtin_workload_names())})")
        declared = load_workload_file(path).model.vars
        for var in workload.vars:
            if var not in declared:
                raise fail(("workloads", name, "vars", var), f"not a variable of {path.name} "
                           f"(its [vars]: {', '.join(declared) or 'none'})")
        checked = load_workload_file(path, _overrides(scenario, workload, declared))
        where = ("workloads", name, "weights")
        out[name] = with_weights(checked, workload.weights,
                                 lambda k, p, at=where: fail((*at, *k), p))
    for i, phase in enumerate(scenario.phases):
        name = workload_of(scenario, i) or ""
        if isinstance(phase, LoadPhase) and name in out and out[name].load_op is None:
            ops = [o for o, m in out[name].model.ops.items() if m.steps is None]
            raise ConfigError(out[name].file, None, "load",
                              f"phase {i + 1} loads workload '{name}': name the op a load phase "
                              f"runs, load = \"...\" (no op 'insert'; ops: {', '.join(ops)})")
    return out


def with_weights(checked: Checked, weights: dict[str, float], fail: Any) -> Checked:
    ops = dict(checked.model.ops)
    for op, weight in weights.items():
        if op not in ops:
            raise fail((op,), f"no op '{op}' in the workload file (ops: {', '.join(ops)})")
        ops[op] = ops[op].model_copy(update={"weight": weight})
    if sum(op.weight for op in ops.values()) <= 0:
        raise fail((), "every op's weight is 0: nothing to run")
    checked.model = checked.model.model_copy(update={"ops": ops})
    return checked


def file_mix(checked: Checked | None) -> str:
    if checked is None:
        return "workload file"
    ops = checked.model.ops
    total = sum(op.weight for op in ops.values()) or 1.0
    mix = " ".join(f"{name} {op.weight / total:.0%}" for name, op in ops.items() if op.weight > 0)
    return f"{mix} (file {Path(checked.file).name})"
