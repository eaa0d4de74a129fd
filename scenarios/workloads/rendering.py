"""How a workload file's slot is checked and becomes what one engine's agents run: the
engine's package gives it (issue 30), as its `FileSlot`'s ``rendering``
(``"module:attribute"`` of a `WorkloadRendering`); the core never names an engine.

Engines that speak an SQL dialect give a ``SqlRendering`` (sql_rendering.py): the
core renders statements and their parameters, the engine says how it quotes, marks
parameters and writes its DDL. Others render their own slot (a document store's calls).
"""

from __future__ import annotations

import functools
from collections.abc import Collection, Iterator
from typing import TYPE_CHECKING, Any, Protocol

from loadtower.protocol.engine_kinds import load_attribute
from loadtower.scenarios.workloads.file_slot import file_slots, slot_named

if TYPE_CHECKING:
    from loadtower.protocol.workload_file_spec import StatementSpec
    from loadtower.scenarios.models import Target
    from loadtower.scenarios.workloads.checks import Checked
    from loadtower.scenarios.workloads.render_statements import Names


class WorkloadRendering(Protocol):
    """A workload file on one statement slot (a kind's ``dialect``).

    The checks (checks.py) ask it of each op's statement in the slot (its text, or the
    engine's own model); the rendering for a target (target_spec.py) asks the rest."""

    slot: str

    def op_table(self, statement: Any, tables: Collection[str]) -> str | None:
        """The file's table the statement names (for an op that names none)."""
        ...

    def problem(self, statement: Any, tables: Collection[str], groups: dict[str, list[str]],
                rows: int) -> str | None:
        """What is wrong with the statement beyond its bindings, for an op of `rows` rows
        (None: nothing)."""
        ...

    def params(self, statement: Any, groups: dict[str, list[str]]) -> list[str]:
        """The statement's parameters in order (a group's: its members)."""
        ...

    def contexts(self, statement: Any, groups: dict[str, list[str]], columns: dict[str, str]
                 ) -> Iterator[tuple[str, str]]:
        """(parameter, column) where the statement compares or sets a column to it (the
        parameter takes the column's type)."""
        ...

    def names(self, checked: Checked, keyspace: str, tables: dict[str, str] | None,
              target: Target) -> Names:
        """What ``${...}`` references resolve to on `target` (its keyspace, the workload's
        table rename, what the engine's own target keys change, e.g. a table's engine)."""
        ...

    def ddl(self, checked: Checked, target: Target, names: Names) -> list[str]:
        """The statements that create the keyspace and the file's tables on `target`."""
        ...

    def qualified(self, names: Names, table: str) -> str:
        """A file's table as the engine names it."""
        ...

    def statements(self, checked: Checked, names: Names) -> dict[str, list[StatementSpec]]:
        """op -> its statements as the agents take them (ops without one: absent)."""
        ...


@functools.cache
def workload_rendering(slot: str) -> WorkloadRendering | None:
    """The rendering of statement slot `slot` (None: no registered engine has the slot,
    or its slot names no rendering)."""
    found = slot_named(slot)
    if found is None or not found.rendering:
        return None
    rendering: WorkloadRendering = load_attribute(found.rendering)
    return rendering


def rendered_slots() -> tuple[str, ...]:
    """The statement slots that some registered engine renders workload files for."""
    return tuple(s.name for s in file_slots() if s.rendering)
