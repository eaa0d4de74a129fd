"""How much the core knows about the database engines (issue 30's before/after counts).

Reads the product's Python files (the rooms and loadtower/, not tests) and prints, per
room: files, lines, branches on an engine's name (a quoted engine name, or a group of them
such as `CQL_ENGINES`, compared with ==, !=, `in`, or a `match` case), engine-keyed
tables (a dict literal with an engine name as a key, or a set/tuple/list of two or more
engine names assigned to a name), imports of our own modules made inside a function,
and names: every mention of an engine's or a family's name in the file's text (code,
comments and docstrings; `cql_name` counts). Branches and tables are found by reading
the syntax, so a table built another way (a comprehension, a registry filled by calls)
is not counted: a lower bound.

usage: python scripts/engine_coupling.py [--json | --where]
"""

from __future__ import annotations

import argparse
import ast
import json
import re
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# the core's rooms, then the engine packages (where an engine may name itself: counted for
# files and lines; the ratchet, tests/test_engine_coupling.py, bounds only the core)
ROOMS = ("loadtower", "agents", "protocol", "sandbox", "scenarios", "orchestrator", "fleet", "store",
         "tui", "engines")
# and "cql", the family of Cassandra and ScyllaDB (protocol/engine_kinds.py): a comparison
# with a family name is as much a branch on engines as one with an engine name
ENGINES = {"cassandra", "scylla", "scylladb", "clickhouse", "mongodb", "mongo", "redis", "cql"}
# the install sets name each engine's driver (cassandra-driver, pymongo, ...), keyed by the
# engine's extra (ENGINE_EXTRAS): neither its names nor that table are counted
NAMES_KEPT = ("install_sets.py",)
# a mention in the text, the longest name first ("mongodb" once, not also "mongo")
MENTION = re.compile("|".join(sorted(ENGINES, key=len, reverse=True)), re.I)


def _engine_name(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str) \
        and node.value.lower() in ENGINES


def _names_an_engine(node: ast.AST) -> bool:
    """A constant engine name, a tuple/list/set of them, or a name for a group of engines
    (`CQL_ENGINES`, `TLS_ENGINES`, ...)."""
    if _engine_name(node):
        return True
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return any(_engine_name(e) for e in node.elts)
    name = node.id if isinstance(node, ast.Name) else (
        node.attr if isinstance(node, ast.Attribute) else "")
    return name.upper().endswith("_ENGINES")


class Counts(ast.NodeVisitor):
    def __init__(self) -> None:
        self.where: list[tuple[int, str]] = []  # (line, kind) of each one counted
        self._depth = 0

    def visit_Compare(self, node: ast.Compare) -> None:
        if any(isinstance(op, (ast.Eq, ast.NotEq, ast.In, ast.NotIn)) for op in node.ops) \
                and any(_names_an_engine(x) for x in [node.left, *node.comparators]):
            self.where.append((node.lineno, "branch"))
        self.generic_visit(node)

    def visit_match_case(self, node: ast.match_case) -> None:
        if isinstance(node.pattern, ast.MatchValue) and _engine_name(node.pattern.value):
            self.where.append((node.pattern.lineno, "branch"))
        self.generic_visit(node)

    def visit_Dict(self, node: ast.Dict) -> None:
        if any(k is not None and _engine_name(k) for k in node.keys):
            self.where.append((node.lineno, "table"))
        self.generic_visit(node)

    def visit_Assign(self, node: ast.Assign) -> None:
        """A set, tuple or list of engine names kept under a name (`CQL_ENGINES = {...}`)."""
        if isinstance(node.value, (ast.Tuple, ast.List, ast.Set)) and \
                sum(_engine_name(e) for e in node.value.elts) >= 2:
            self.where.append((node.lineno, "table"))
        self.generic_visit(node)

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self._depth += 1
        self.generic_visit(node)
        self._depth -= 1

    visit_FunctionDef = _function
    visit_AsyncFunctionDef = _function

    def _import(self, node: ast.Import | ast.ImportFrom) -> None:
        if self._depth:
            if isinstance(node, ast.ImportFrom):
                ours = node.level > 0 or (node.module or "").startswith("loadtower")
            else:
                ours = any(a.name.startswith("loadtower") for a in node.names)
            if ours:
                self.where.append((node.lineno, "inner_import"))

    visit_Import = _import
    visit_ImportFrom = _import


def count(where: list[str] | None = None) -> dict[str, dict[str, int]]:
    """The counts per room; each one counted is added to `where` as "path:line: kind"."""
    rooms: dict[str, Counter[str]] = {}
    for room in ROOMS:
        total: Counter[str] = Counter()
        for path in sorted((ROOT / room).rglob("*.py")):
            if path.is_symlink() or any(p.is_symlink() for p in path.parents if p != ROOT):
                continue  # loadtower/<room> links back to the rooms: counted once
            text = path.read_text(encoding="utf-8")
            visitor = Counts()
            visitor.visit(ast.parse(text, str(path)))
            if path.name in NAMES_KEPT:
                visitor.where = [(line, k) for line, k in visitor.where if k != "table"]
            kinds = Counter(kind for _line, kind in visitor.where)
            names = 0 if path.name in NAMES_KEPT else len(MENTION.findall(text))
            total.update(files=1, lines=text.count("\n"), branches=kinds["branch"],
                         tables=kinds["table"], inner_imports=kinds["inner_import"], names=names)
            if where is not None:
                rel = path.relative_to(ROOT)
                where.extend(f"{rel}:{line}: {kind}" for line, kind in sorted(visitor.where))
                if names:
                    where.append(f"{rel}: names {names}")
        rooms[room] = dict(total)
    return rooms


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--where", action="store_true",
                        help="list each branch, table and inner import counted, and the "
                        "engine names of each file")
    args = parser.parse_args()
    where: list[str] = []
    rooms = count(where)
    if args.where:
        print("\n".join(where))
        return
    if args.json:
        print(json.dumps(rooms))
        return
    cols = ("files", "lines", "branches", "tables", "inner_imports", "names")
    print(f"{'room':12} " + " ".join(f"{c:>13}" for c in cols))
    for room, c in rooms.items():
        print(f"{room:12} " + " ".join(f"{c.get(k, 0):>13,}" for k in cols))
    print(f"{'all':12} " + " ".join(
        f"{sum(r.get(k, 0) for r in rooms.values()):>13,}" for k in cols))


if __name__ == "__main__":
    main()
