"""A workload file on a MongoDB target: each op's ``mongodb`` slot rendered as the call
the agent makes (``loadtower.engines.mongodb.agent.call_spec``) and the text
``loadtower check`` prints of it; the DDL (``create COLL``, ``index COLL {keys}``).

Parameters become ``{"$param": name}`` marks (in bind order, with their portable
types), column groups and ``${...}`` references are resolved (see ``call_templates.py``),
``${table}`` is the collection's name in the target's database (the workload's
``table`` rename applies).
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterator
from typing import Any

from loadtower.engines.mongodb.agent.call_spec import MONGO_INSERTS, MongoCallSpec
from loadtower.engines.mongodb.orchestrator import call_templates
from loadtower.engines.mongodb.orchestrator.call_templates import PARAM, REF, group_key, picks
from loadtower.engines.mongodb.orchestrator.file_slot import MongodbOp, mongodb_of
from loadtower.protocol.workload_file_spec import PARAM_MARK, StatementSpec
from loadtower.scenarios.models import Target
from loadtower.scenarios.workloads.call_marks import CallMarks
from loadtower.scenarios.workloads.checks import Checked
from loadtower.scenarios.workloads.models import Table
from loadtower.scenarios.workloads.render_statements import Names


def collection(name: str, names: Names) -> str:
    """A collection's name: a file's table (``${t}`` or ``t``) as the target names it."""
    m = REF.fullmatch(name.strip())
    table = m.group(1).strip() if m else name
    return names.tables.get(table, table)


def mongodb_ddl(tables: dict[str, Table], names: Names) -> list[str]:
    """Each table's collection (created unless it exists) and its declared indexes
    (``create_index``: idempotent)."""
    out: list[str] = []
    for name, table in tables.items():
        coll = collection(name, names)
        out.append(f"create {coll}")
        own = mongodb_of(table)
        for index in own.indexes if own is not None else []:
            out.append(f"index {coll} {json.dumps(index, separators=(',', ':'))}")
    return out


class _Render(CallMarks):
    """A call's templates with their marks and references (call_marks.py)."""

    def node(self, node: Any) -> Any:
        if isinstance(node, dict):
            out: dict[str, Any] = {}
            for key, value in node.items():
                group = group_key(key)
                if group is None:
                    out[self.text(key)] = self.node(value)
                    continue
                whole = isinstance(value, str) and PARAM.match(value)
                for member in self.groups[group]:
                    out[member] = self.mark(member) if whole else self.node(value)
            return out
        if isinstance(node, list):
            return [self.node(v) for v in node]
        if isinstance(node, str):
            m = PARAM.match(node)
            return self.mark(m.group(1)) if m else self.text(node)
        return node


def render_call(op: MongodbOp, names: Names, groups: dict[str, list[str]], picked: int = 0
                ) -> tuple[MongoCallSpec, list[str]]:
    """The call of member `picked` and its parameters in order."""
    r = _Render(names, groups, picked)
    spec: MongoCallSpec = {"call": op.call, "collection": collection(op.collection, names)}
    if op.filter or op.call not in MONGO_INSERTS:
        spec["filter"] = r.node(op.filter)
    if op.document is not None:
        spec["document"] = r.node(op.document)
    if op.update is not None:
        spec["update"] = r.node(op.update)
    if op.pipeline is not None:
        spec["pipeline"] = r.node(op.pipeline)
    if op.sort is not None:
        spec["sort"] = [[r.text(k), v] for k, v in op.sort.items()]
    if op.limit is not None:
        spec["limit"] = r.node(op.limit)
    return spec, r.binds


def shown(node: Any) -> str:
    """A template as check prints it: JSON with each parameter as ``:name``."""
    if isinstance(node, dict):
        if set(node) == {PARAM_MARK}:
            return f":{node[PARAM_MARK]}"
        return "{" + ", ".join(f"{json.dumps(k)}: {shown(v)}" for k, v in node.items()) + "}"
    if isinstance(node, list):
        return "[" + ", ".join(shown(v) for v in node) + "]"
    return json.dumps(node)


def call_text(spec: MongoCallSpec, keyspace: str) -> str:
    """``ks.coll.update_one({...}, {...})``: what the agent calls, as check prints it."""
    call = spec["call"]
    args = [shown(spec.get("filter", {}))] if "filter" in spec else []
    if call == "insert_many":
        args = [f"[{shown(spec.get('document', {}))}]"]
    elif call == "insert_one":
        args = [shown(spec.get("document", {}))]
    elif call == "replace_one":
        args.append(shown(spec.get("document", {})))
    elif "update" in spec:
        args.append(shown(spec["update"]))
    if call == "aggregate":
        args = [shown(spec.get("pipeline", []))]
    text = f"{keyspace}.{spec['collection']}.{call}({', '.join(args)})"
    if "sort" in spec:
        text += ".sort({" + ", ".join(f"{json.dumps(k)}: {v}" for k, v in spec["sort"]) + "})"
    if "limit" in spec:
        text += f".limit({shown(spec['limit'])})"
    return text


def mongodb_statements(checked: Checked, names: Names) -> dict[str, list[StatementSpec]]:
    """op -> its calls on MongoDB (one per picked member); ops without a slot: absent."""
    out: dict[str, list[StatementSpec]] = {}
    for name, op in checked.model.ops.items():
        call = op.statement("mongodb")
        if not isinstance(call, MongodbOp):
            continue
        groups = checked.model.tables[checked.op_tables[name]].groups()
        types = checked.param_types[name]
        calls = []
        for picked in range(picks(call, groups)):
            spec, binds = render_call(call, names, groups, picked)
            calls.append(StatementSpec(
                text=call_text(spec, names.keyspace), binds=list(binds),
                insert_rows=call.call in MONGO_INSERTS,
                types={b: types[b] for b in binds if b in types}, call=dict(spec)))
        out[name] = calls
    return out


class MongoRendering:
    """The `WorkloadRendering` of the ``mongodb`` slot (scenarios/workloads/rendering.py)."""

    slot = "mongodb"

    def op_table(self, statement: Any, tables: Collection[str]) -> str | None:
        named = str(statement.collection).strip("${}")
        return named if named in tables else None

    def problem(self, statement: Any, tables: Collection[str], groups: dict[str, list[str]],
                rows: int) -> str | None:
        return call_templates.problem(statement, tables, groups, rows)

    def params(self, statement: Any, groups: dict[str, list[str]]) -> list[str]:
        return call_templates.op_params(statement, groups)

    def contexts(self, statement: Any, groups: dict[str, list[str]], columns: dict[str, str]
                 ) -> Iterator[tuple[str, str]]:
        for _, template in call_templates.templates(statement):
            yield from call_templates.contexts(template, groups, columns)

    def names(self, checked: Checked, keyspace: str, tables: dict[str, str] | None,
              target: Target) -> Names:
        return Names(keyspace, dict(tables or {}))

    def ddl(self, checked: Checked, target: Target, names: Names) -> list[str]:
        return mongodb_ddl(checked.model.tables, names)

    def qualified(self, names: Names, table: str) -> str:
        return names.tables.get(table, table)  # a collection of the target's database

    def statements(self, checked: Checked, names: Names) -> dict[str, list[StatementSpec]]:
        return mongodb_statements(checked, names)


RENDERING = MongoRendering()
