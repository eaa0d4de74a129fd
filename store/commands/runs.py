"""`loadtower runs`: list the runs in the store, oldest first."""

from __future__ import annotations

import argparse
import json
import time
from typing import Any

from loadtower.defaults import add_store_argument, store_path
from loadtower.errors import LoadtowerError
from loadtower.store.commands import reads_store
from loadtower.store.terminal_text import cell, print_table, table_console, visible

HELP = "List the runs in the store (oldest first)."
COLUMNS = ("id", "name", "scenario", "status", "started", "duration", "reason")
PRIORITY = ("id", "status", "started", "name", "duration", "scenario", "reason")  # narrow


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_store_argument(parser)
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")


def _when(ts: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts)) if ts else ""


def runs_table(runs: list[dict[str, Any]], columns: tuple[str, ...] = COLUMNS) -> Any:
    """The runs as a Rich table of `columns`. The id column is never cut or wrapped
    (compare, export and report need whole ids); the others wrap when space is short."""
    from rich.table import Table

    table = Table()
    widest = max((len(visible(r["id"])) for r in runs), default=2)
    for name in columns:
        if name == "id":
            table.add_column("id", no_wrap=True, min_width=widest, overflow="ignore")
        else:
            table.add_column(name)
    for r in runs:
        took = f"{r['ended'] - r['started']:.0f} s" if r["ended"] and r["started"] else ""
        cells = {"id": r["id"], "name": r["name"], "scenario": r["scenario"],
                 "status": r["status"], "started": _when(r["started"]), "duration": took,
                 "reason": r["reason"]}  # fmt: skip
        # cell(): names such as "[east]" are not Rich markup, and no stored control
        # character (an ESC sequence in a reason, say) reaches the terminal
        table.add_row(*(cell(cells[c]) for c in columns))
    return table


def print_runs(runs: list[dict[str, Any]], console: Any = None) -> None:
    """Print the table. Piped (not a terminal): as wide as the table needs, so nothing is
    cut at 80 columns. On a terminal: the columns that fit without cutting a word, in
    PRIORITY order (the id always, whole even when the terminal is narrower), and a line
    naming the ones left out."""
    from rich.measure import Measurement

    console = console or table_console()
    unbounded = console.options.update_width(1 << 20)
    if not console.is_terminal:
        print_table(runs_table(runs), console)
        return
    for count in range(len(PRIORITY), 0, -1):
        shown = tuple(c for c in COLUMNS if c in PRIORITY[:count])
        table = runs_table(runs, shown)
        needed = Measurement.get(console, unbounded, table).minimum
        if needed <= console.width:
            break
    width = console.width
    console.width = max(width, needed)
    console.print(table)
    hidden = [c for c in COLUMNS if c not in shown]
    if hidden:
        console.print(f"({', '.join(hidden)} left out at {width} columns; --json has every "
                      "field)", markup=False, highlight=False)  # fmt: skip


def dead_hints(path: Any) -> list[str]:
    """One line per 'running' run whose orchestrator is gone (found read-only: `runs`
    never writes the store; `loadtower repair` marks them)."""
    import duckdb

    # deferred: admin loads duckdb; `loadtower --help` imports this command module
    from loadtower.store.admin import dead_runs

    try:
        dead = dead_runs(path)
    except (LoadtowerError, duckdb.Error):
        return []
    return [visible(f"loadtower runs: run {run_id} is still 'running' but {reason}: "
                    f"`loadtower repair --store {path}` marks it interrupted",
                    keep_newlines=False) for run_id, reason in dead.items()]


@reads_store
def run(args: argparse.Namespace) -> int:
    import sys

    # deferred: the reader loads duckdb; `loadtower --help` imports this command module
    from loadtower.store import StoreReader

    runs = StoreReader(store_path(args)).runs()
    for line in dead_hints(store_path(args)):
        print(line, file=sys.stderr)
    if args.json:
        print(json.dumps(runs, indent=2, default=str))
        return 0
    print_runs(runs)
    return 0
