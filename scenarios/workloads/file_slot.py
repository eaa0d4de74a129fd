"""A workload file's slot for one engine (issue 30): what ``[ops.X].NAME`` and
``[tables.T.NAME]`` hold, declared by the engine's package and found through its kind
(``workload_file``: ``"module:attribute"`` of a `FileSlot`).

The file's model (models.py) has one field per slot of the registered engines; the
checks ask the slot's rendering what its statements' parameters and references are
(rendering.py), so the core names no engine and no slot.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel

from loadtower.protocol.engine_kinds import KINDS, EngineKind, load_attribute


@dataclass(frozen=True)
class FileSlot:
    name: str  # the key in [ops.X] and [tables.T] (a kind's dialect)
    op: Any  # the type of [ops.X].NAME: a statement's text, or the engine's own model
    table: type[BaseModel]  # the model of [tables.T.NAME]
    # an absent [tables.T.NAME] is None (else the model's defaults)
    table_optional: bool = False
    # keys of [tables.T.NAME] whose values (a list, or a table's keys) name columns
    column_keys: tuple[str, ...] = ()
    # "module:attribute" of its WorkloadRendering (rendering.py): imported on first use
    rendering: str = ""
    # a built-in workload's scenario settings that the shipped file has no variable for,
    # applied to a table's slot: (the slot's model, the scenario's workload, the file's
    # variables) -> the slot's model (builtin_files.py)
    tune_builtin: Callable[[BaseModel, Any, Collection[str]], BaseModel] | None = None
    # a YCSB property file's readallfields = false / writeallfields = true on the shipped
    # ycsb file's ops (TOML data, op -> keys): (ops, read all fields, write all fields),
    # rewriting the slot's own read and update (ycsb_workload.py); None: it has no form
    # of them (such a property file is refused)
    ycsb_properties: Callable[[dict[str, Any], bool, bool], None] | None = None
    # whether a scenario's target (its `Target`) runs each op's ``OP_mutation`` variant,
    # where the file has one, in OP's place (builtin_files.for_target); None: never
    mutation_variants: Callable[[Any], bool] | None = None


@functools.cache
def file_slots() -> tuple[FileSlot, ...]:
    """The slots of the registered engines (load_slots)."""
    return load_slots(KINDS.values())


def load_slots(kinds: Iterable[EngineKind]) -> tuple[FileSlot, ...]:
    """The slots of `kinds`, one per dialect, in their order (one that does not import is
    left out with one line on stderr: its engine then runs no workload files)."""
    found: dict[str, FileSlot] = {}
    for k in kinds:
        if k.workload_file is not None and k.dialect not in found:
            try:
                slot = load_attribute(k.workload_file)
            except (ImportError, AttributeError) as exc:  # as discover() leaves an engine out
                print(f"loadtower: engine {k.name}'s workload-file slot ({k.workload_file}) "
                      f"is left out: {exc}", file=sys.stderr)
                continue
            if not isinstance(slot, FileSlot) or slot.name != k.dialect:
                raise TypeError(f"engine {k.name}: workload_file {k.workload_file} is not the "
                                f"FileSlot of its dialect {k.dialect!r}")
            found[k.dialect] = slot
    return tuple(found.values())


def slot_names() -> tuple[str, ...]:
    return tuple(s.name for s in file_slots())


def slot_named(name: str) -> FileSlot | None:
    """The registered slot `name` (None: no registered engine runs it)."""
    return next((s for s in file_slots() if s.name == name), None)
