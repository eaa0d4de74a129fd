"""Rows of one op of a workload file (the reference binder): its key number drawn once
per row and shared by its ``gen = "key"`` bindings, every parameter's value from its
generator (``generators.py``), a column group's binding for each member."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from loadtower.agents.workload.generators import Context, Draw, generator, remember
from loadtower.protocol.workload_file_spec import OpBindSpec


class OpBinder:
    def __init__(
        self, name: str, op: OpBindSpec, ctx: Context,
        source: Callable[[str, str], Any] | None = None,
    ) -> None:
        self.name, self.ctx = name, ctx
        self.batch = int(op.get("batch", 1))
        key_spec = op.get("key")
        self._draw_key = ctx.key_draw(key_spec) if key_spec else None
        self._key = 0
        groups: dict[str, list[str]] = op.get("groups", {})
        types: dict[str, str] = op.get("types", {})
        self.draws: dict[str, Draw] = {}
        # the data sets this op reads: one file row per op row, shared by their bindings
        self._datasets: list[str] = []
        self._rows: dict[str, dict[str, Any] | LookupError] = {}
        for param, spec in op.get("bind", {}).items():
            members = groups.get(param[:-1], []) if param.endswith("*") else [param]
            if spec.get("gen") == "dataset":
                name = spec.get("dataset") or next(iter(ctx.datasets), None) or ""
                if name not in self._datasets:
                    self._datasets.append(name)
            for member in members:
                self.draws[member] = generator(
                    spec, types[member], ctx, lambda: self._key, source, self._dataset_row
                )

    def _dataset_row(self, name: str) -> dict[str, Any]:
        row = self._rows.get(name)
        if row is None:
            raise LookupError(f"data set {name} is not loaded here")
        if isinstance(row, LookupError):
            raise row
        return row

    def row(
        self, missing: Callable[[str, LookupError], Any] | None = None, key: int | None = None
    ) -> dict[str, Any]:
        """The next row; `missing` gives the value of a parameter whose source is not
        here (a data set not loaded), else the LookupError goes up; `key`: this row's
        key number instead of a draw (the later steps of an op with steps)."""
        if key is not None:
            self._key = key
        elif self._draw_key is not None:
            self._key = self._draw_key()
        for name in self._datasets:
            try:
                self._rows[name] = self.ctx.dataset_row(name)
            except LookupError as exc:
                self._rows[name] = exc
        out = {}
        for param, draw in self.draws.items():
            try:
                out[param] = draw()
            except LookupError as exc:
                if missing is None:
                    raise
                out[param] = missing(param, exc)
        remember(self.ctx, self.name, out)
        return out

    def key(self) -> int:
        """The key number of the last row."""
        return self._key

    def rows(self) -> list[dict[str, Any]]:
        """One op's rows (its batch)."""
        return [self.row() for _ in range(self.batch)]


def step_rows(steps: list[OpBinder]) -> list[dict[str, Any]]:
    """One row of each step of an op with ``steps``: the first step draws the key
    number, the others bind the same one (YCSB's read-modify-write of one key)."""
    first = steps[0].row()
    return [first, *(step.row(key=steps[0].key()) for step in steps[1:])]
