"""A workload file on an engine that speaks SQL: the core's half of its rendering.

An engine's package subclasses `SqlRendering` with what is its own: how it quotes names,
marks parameters (``marker``, ``list_marker``), reads ``${final}``, whether an ``INSERT
... VALUES`` becomes one insert of the batch's rows, its column types, and its DDL. The
statements, their variants and the parameters' order and types are rendered here, the
same for every such engine.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from typing import Any

from loadtower.protocol.workload_file_spec import StatementSpec
from loadtower.scenarios.models import Target
from loadtower.scenarios.workloads.checks import Checked
from loadtower.scenarios.workloads.models import Table
from loadtower.scenarios.workloads.render_statements import Names, Rendered, render, variants
from loadtower.scenarios.workloads.sql_checks import contexts, refs_problem, table_named
from loadtower.scenarios.workloads.statement_text import Part, param_names, parts


class SqlRendering:
    slot: str = ""  # the workload file's statement slot (a kind's dialect)
    native_params: bool = False  # the engine's own ``{name:Type}`` parameters are kept

    def quote(self, name: str) -> str:
        raise NotImplementedError

    def marker(self, name: str, type_: str) -> str:
        raise NotImplementedError

    def list_marker(self, names: tuple[str, ...], types: list[str]) -> str:
        raise NotImplementedError

    def column_type(self, portable: str) -> str:
        """The engine's type of a portable column type (scenarios/workloads/types.py)."""
        raise NotImplementedError

    def ddl(self, checked: Checked, target: Target, names: Names) -> list[str]:
        raise NotImplementedError

    def final(self, names: Names, table: str | None) -> str:
        return ""

    def rows_insert(self, text: str) -> str | None:
        return None

    def parts(self, statement: Any) -> list[Part]:
        return parts(str(statement), self.native_params)

    def op_table(self, statement: Any, tables: Collection[str]) -> str | None:
        return table_named(self.parts(statement), tables)

    def problem(self, statement: Any, tables: Collection[str], groups: dict[str, list[str]],
                rows: int) -> str | None:
        return refs_problem(self.parts(statement), tables, groups)

    def params(self, statement: Any, groups: dict[str, list[str]]) -> list[str]:
        return param_names(self.parts(statement), groups)

    def contexts(self, statement: Any, groups: dict[str, list[str]], columns: dict[str, str]
                 ) -> Iterator[tuple[str, str]]:
        return contexts(self.parts(statement), groups, columns)

    def table_types(self, table: Table) -> dict[str, str]:
        """The table's per-engine ``types`` overrides on this engine."""
        types = getattr(table.slot(self.slot), "types", None)
        return dict(types) if isinstance(types, dict) else {}

    def names(self, checked: Checked, keyspace: str, tables: dict[str, str] | None,
              target: Target) -> Names:
        return Names(keyspace, dict(tables or {}))

    def qualified(self, names: Names, table: str) -> str:
        return f"{self.quote(names.keyspace)}.{self.quote(names.tables.get(table, table))}"

    def raw(self, statements: list[str], names: Names) -> list[str]:
        """A table's own DDL of the file, its references resolved."""
        return [render(s, self, names, {}, {}).text for s in statements]

    def param_types(self, checked: Checked, op: str) -> dict[str, str]:
        """Each parameter's type on the engine (a table's ``types`` override counts)."""
        overrides = self.table_types(checked.model.tables[checked.op_tables[op]])
        out = {}
        for param, typ in checked.param_types[op].items():
            column = checked.param_columns[op].get(param)
            out[param] = overrides.get(column or "", self.column_type(typ))
        return out

    def op_statements(self, checked: Checked, names: Names) -> dict[str, list[Rendered]]:
        """op -> its statement (one per variant); ops without one are left out."""
        return {name: rendered for name, _types, rendered in self._rendered(checked, names)}

    def statements(self, checked: Checked, names: Names) -> dict[str, list[StatementSpec]]:
        return {name: [_statement(r, types) for r in rendered]
                for name, types, rendered in self._rendered(checked, names)}

    def _rendered(self, checked: Checked, names: Names
                  ) -> Iterator[tuple[str, dict[str, str], list[Rendered]]]:
        """(op, its parameters' types here, its statement per variant) of each op with a
        statement in the slot."""
        for name, op in checked.model.ops.items():
            statement = op.statement(self.slot)
            if not isinstance(statement, str):
                continue
            table = checked.op_tables[name]
            groups = checked.model.tables[table].groups()
            types = self.param_types(checked, name)
            count = variants(statement, groups, self.native_params)
            yield name, types, [render(statement, self, names, groups, types, picked=i,
                                       table=table) for i in range(count)]

def _statement(r: Rendered, types: dict[str, str]) -> StatementSpec:
    binds = [b if isinstance(b, str) else list(b) for b in r.binds]
    names = {n for b in r.binds for n in ((b,) if isinstance(b, str) else b)}
    return {"text": r.text, "binds": binds, "insert_rows": r.insert_rows,
            "types": {n: t for n, t in types.items() if n in names}}
