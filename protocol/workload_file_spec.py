"""The plain description of a workload file's ops that agents bind (the phase spec's
``workload_file``): what ``loadtower.scenarios.workloads`` validates and a binder (the
Python reference in ``agents/workload/binder.py``, later the Rust core) implements.

Generators are dicts keyed by ``gen`` with the fields docs/workloads.md lists; these
types name the parts a binder reads.
"""

from typing import Any, TypedDict

GeneratorSpec = dict[str, Any]  # {"gen": "uniform", "keys": 1000, "prefix": "user", ...}


class OpBindSpec(TypedDict, total=False):
    """One op as a binder sees it: its key draw, its bindings and each parameter's
    type (a portable column type: text, bigint, uuid, ...)."""

    key: GeneratorSpec
    bind: dict[str, GeneratorSpec]  # parameter (or "group*") -> generator
    types: dict[str, str]  # parameter -> portable type
    groups: dict[str, list[str]]  # "field" -> ["field0", ...] (for "field*" bindings)
    batch: int


class DatasetSpec(TypedDict, total=False):
    file: str
    format: str
    columns: dict[str, str]


class WorkloadFileSpec(TypedDict, total=False):
    """A workload file as the phase spec carries it (``PhaseSpec.workload_file``): the
    whole validated file (tables, ops and statements, as docs/workloads.md writes them)
    and each op's binder spec with the types the checks worked out."""

    model: dict[str, Any]  # WorkloadFile.as_spec()
    ops: dict[str, OpBindSpec]
