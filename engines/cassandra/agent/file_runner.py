"""Workload-file statements on CQL (``agents/workload/file_ops.py``): prepared once by
name, one row bound in `?` order, N rows as an UNLOGGED BATCH, a ``:[...]`` list as one
statement whose ``IN ?`` takes the rows' values."""

from __future__ import annotations

from typing import Any

from loadtower.agents.backends import prepare_retrying
from loadtower.agents.workload.file_ops import Row, bind_value, has_list, positional
from loadtower.protocol.workload_file_spec import StatementSpec

FLOATS = ("float", "double")


def float_names(statement: StatementSpec) -> list[str]:
    """The statement's parameters of a float column."""
    return [n for n, t in statement.get("types", {}).items() if t.lower() in FLOATS]


def as_floats(statement: StatementSpec, rows: list[Row],
              names: list[str] | None = None) -> list[Row]:
    """The rows with numbers made float where the column is (an `int` key bound into a
    `float` column, study 1's total_price): the drivers refuse an int for a float."""
    if names is None:
        names = float_names(statement)
    if not names:
        return rows
    return [{**row, **{n: float(row[n]) for n in names if isinstance(row.get(n), int)}}
            for row in rows]


class CqlFileRunner:
    def __init__(self, session: Any) -> None:
        self.session = session
        # per statement name: (its float parameters, whether it has a `:[...]` list)
        self._shape: dict[str, tuple[list[str], bool]] = {}

    async def prepare(self, statements: dict[str, StatementSpec]) -> None:
        texts = {name: s["text"] for name, s in statements.items()}
        await prepare_retrying(lambda: self.session.prepare(texts))

    def send(self, name: str, statement: StatementSpec, rows: list[Row]) -> Any:
        shape = self._shape.get(name)
        if shape is None:  # worked out once per statement, not per op
            shape = self._shape[name] = (float_names(statement), has_list(statement))
        rows = as_floats(statement, rows, shape[0])
        if shape[1]:
            return self.session.execute(name, tuple(bind_value(b, rows)
                                                    for b in statement["binds"]))
        if len(rows) == 1:
            return self.session.execute(name, positional(statement, rows[0]))
        return self.session.batch(name, [positional(statement, row) for row in rows])

    def found(self, result: Any) -> bool:
        """A row came back: acsylla's Result (count()), cassandra-driver's ResultSet."""
        count = getattr(result, "count", None)
        if callable(count):
            return bool(count())
        rows = getattr(result, "current_rows", None)
        if rows is not None:
            return bool(rows)
        return result is not None and bool(result)
