"""A YCSB property file (or a workload file) given where a scenario is expected:
`loadtower run workloada -i INV`, `loadtower check workloada -i INV`.

YCSB runs such a file with its client's defaults; so does loadtower, as a scenario of two
phases on the file's workload: a load phase of `recordcount` records (`threadcount` in
flight) and a run phase — `target` ops/s (open model) for `operationcount / target`
seconds (or `maxexecutiontime`, when shorter or alone), or, with no `target`, `threadcount`
users (closed model) for `maxexecutiontime` seconds. loadtower's phases are timed, not
counted: a closed-model run with neither `maxexecutiontime` nor `target` runs for
DEFAULT_RUN_S and says so. Each default taken is one note that `check` and `run` print;
`--set` changes any key of the scenario (e.g. `--set engine=NAME` for another engine).

A workload file (TOML with `[ops]`) runs the same way with YCSB's client defaults and its
`records` / `operations` variables as recordcount / operationcount.
"""

from __future__ import annotations

import json
import math
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loadtower.errors import ConfigError
from loadtower.protocol.engine_kinds import default_engine
from loadtower.scenarios.models import Dataset
from loadtower.scenarios.workloads.java_properties import parse_properties
from loadtower.scenarios.workloads.loader import is_properties

DEFAULT_RUN_S = 30.0
YCSB_THREADS = 1  # YCSB's Client: threadcount=1, target=0 (no throttle), maxexecutiontime=0
NAME = re.compile(r"[^A-Za-z0-9_]")


@dataclass(frozen=True)
class DirectScenario:
    data: dict[str, Any]  # the scenario, as a scenario file would hold it
    source: str  # that scenario as TOML text (what errors' line numbers point into)
    notes: tuple[str, ...]  # the defaults taken, one line each


def _number(value: str, file: str, line: int | None, key: str) -> float:
    try:
        number = float(value)
    except ValueError:
        raise ConfigError(file, line, key, f"expected a number, got {value!r}") from None
    if not math.isfinite(number) or number < 0:
        raise ConfigError(file, line, key, f"expected a number of 0 or more, got {value!r}")
    return number


def _client_settings(path: Path, source: str) -> dict[str, tuple[float, int | None]]:
    """recordcount, operationcount, threadcount, target and maxexecutiontime as numbers
    (with their lines) from a property file; the last one given wins, as in Java."""
    wanted = ("recordcount", "operationcount", "threadcount", "target", "maxexecutiontime")
    found: dict[str, tuple[float, int | None]] = {}
    for prop in parse_properties(source):
        if prop.key in wanted:
            found[prop.key] = (_number(prop.value, str(path), prop.line, prop.key), prop.line)
    return found


def _workload_settings(path: Path, source: str) -> dict[str, tuple[float, int | None]]:
    """A workload file's `records` / `operations` variables as recordcount / operationcount."""
    data = tomllib.loads(source)
    variables = data.get("vars", {})
    found: dict[str, tuple[float, int | None]] = {}
    for var, key in (("records", "recordcount"), ("operations", "operationcount")):
        spec = variables.get(var) if isinstance(variables, dict) else None
        value = spec.get("default") if isinstance(spec, dict) else spec
        if isinstance(value, int | float) and not isinstance(value, bool):
            found[key] = (float(value), None)
    return found


def is_workload_toml(path: Path, source: str) -> bool:
    """A workload file (its `[ops]` and no `[[phases]]`) rather than a scenario."""
    try:
        data = tomllib.loads(source)
    except (ValueError, RecursionError):
        return False  # the scenario loader says what is wrong with it
    return isinstance(data.get("ops"), dict) and "phases" not in data


def direct_scenario(path: Path, source: str) -> DirectScenario | None:
    """The scenario YCSB's client would run for this file, or None for a scenario file."""
    if is_properties(path):
        settings = _client_settings(path, source)
        kind = "YCSB property file"
    elif path.suffix.lower() == ".toml" and is_workload_toml(path, source):
        settings = _workload_settings(path, source)
        kind = "workload file"
    else:
        return None
    file = str(path)
    notes: list[str] = [f"{path.name} is a {kind}: run with YCSB's client defaults"]

    def get(key: str, default: float, why: str) -> tuple[float, int | None]:
        if key in settings:
            return settings[key]
        notes.append(f"{key} not given: {why}")
        return default, None

    if kind == "workload file":
        fallback, why = float(Dataset().records), f"loadtower's default {Dataset().records:,}"
    else:
        fallback, why = 0.0, "YCSB's default 0"
    records, records_line = get("recordcount", fallback, why)
    if records < 1:
        raise ConfigError(file, records_line, "recordcount", "must be 1 or more: nothing to load")
    threads, _ = get("threadcount", YCSB_THREADS, f"{YCSB_THREADS} thread (YCSB's default)")
    threads = max(1, int(threads))
    operations, ops_line = settings.get("operationcount", (0.0, None))
    target, _ = settings.get("target", (0.0, None))
    limit, _ = settings.get("maxexecutiontime", (0.0, None))
    run: dict[str, Any] = {"type": "run", "name": "run"}
    if target > 0:
        run["rate"] = target
        if operations > 0:
            seconds = operations / target
            if limit > 0 and limit < seconds:
                seconds = limit
                notes.append(f"maxexecutiontime {limit:g} s comes first: the run lasts {limit:g} s")
            else:
                notes.append(
                    f"operationcount {operations:g} at target {target:g} ops/s: "
                    f"the run lasts {seconds:g} s"
                )
        elif limit > 0:
            seconds = limit
        else:
            raise ConfigError(
                file, ops_line, "operationcount",
                "give operationcount or maxexecutiontime: the run phase needs an end",
            )  # fmt: skip
        notes.append(f"target {target:g} ops/s: open model at that rate")
    else:
        run["users"] = threads
        seconds = limit if limit > 0 else DEFAULT_RUN_S
        notes.append(f"no target: closed model, {threads} users (threadcount)")
        if limit <= 0:
            counted = f"operationcount {operations:g} is not counted: " if operations else ""
            notes.append(
                f"{counted}loadtower's closed-model phases are timed; the run lasts "
                f"{seconds:g} s (set maxexecutiontime or target to choose)"
            )
    run["duration"] = f"{max(seconds, 1.0):g}s"
    name = NAME.sub("_", path.stem or path.name)[:48] or "ycsb"
    data: dict[str, Any] = {
        "name": name,
        "description": f"{path.name} run as the YCSB client runs it",
        "engine": default_engine(),
        "target": {"keyspace": f"lt_{name}"[:48].lower(), "replication_factor": 1},
        "dataset": {"records": int(records)},
        "workloads": {"main": {"file": path.name}},
        "phases": [{"type": "load", "concurrency": threads}, run],
    }
    notes.append(
        f"engine {data['engine']}, keyspace "
        f"{data['target']['keyspace']}, replication 1 (--set engine=... / target.keyspace=...)"
    )
    return DirectScenario(data, to_toml(data), tuple(notes))


def _value(value: Any) -> str:
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_value(v)}" for k, v in value.items()) + " }"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return f"{value:g}" if isinstance(value, float) else str(value)
    return json.dumps(str(value))  # a TOML basic string


def to_toml(data: dict[str, Any]) -> str:
    """The scenario as a scenario file would say it (scalars, one level of tables, the
    phases as [[phases]])."""
    lines = [f"{k} = {_value(v)}" for k, v in data.items() if not isinstance(v, dict | list)]
    for key, value in data.items():
        if isinstance(value, dict):
            lines += ["", f"[{key}]", *(f"{k} = {_value(v)}" for k, v in value.items())]
    for phase in data.get("phases", []):
        lines += ["", "[[phases]]", *(f"{k} = {_value(v)}" for k, v in phase.items())]
    return "\n".join(lines) + "\n"
