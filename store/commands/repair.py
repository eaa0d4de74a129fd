"""`loadtower repair`: mark the runs whose orchestrator is gone interrupted.

Read commands (`runs`, `sql`, `compare`, `report`, `export`, the TUI) never write the
store: they open it read-only and locked down, and `runs` only says which 'running' runs
look dead. This command is the explicit write: each such run becomes 'interrupted' with
the reason and an event, its samples kept (`loadtower run` does the same for the store it
opens). A store whose run tables are views is refused; no view runs with file access."""

from __future__ import annotations

import argparse
import json

from loadtower.defaults import add_store_argument, store_path
from loadtower.errors import LoadtowerError

HELP = "Mark the store's runs whose orchestrator is gone as interrupted (a write)."
DESCRIPTION = HELP + """

A run stays 'running' in the store when its orchestrator was killed. `loadtower runs`
names such runs; this command marks them 'interrupted', with the reason and the time of
the last stored sample as their end. Every sample stays.

examples:
  loadtower repair --store results.duckdb
  loadtower repair --store results.duckdb --json"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_store_argument(parser)
    parser.add_argument("--json", action="store_true", help="print the marked runs as JSON")


def run(args: argparse.Namespace) -> int:
    # deferred: admin loads duckdb; `loadtower --help` imports this command module
    from loadtower.store.admin import mark_interrupted_runs

    path = store_path(args)
    if not path.is_file():
        raise LoadtowerError(f"no store at {path}")
    marked = mark_interrupted_runs(path)
    if args.json:
        print(json.dumps({"marked": marked}))
    elif marked:
        for run_id in marked:
            print(f"run {run_id} marked interrupted (its orchestrator is gone)")
    else:
        print(f"{path}: no run to repair (every 'running' run has a live orchestrator)")
    return 0
