"""`loadtower tui`: the terminal UI over a store."""

from __future__ import annotations

import argparse

from loadtower.defaults import add_store_argument

HELP = "Open the terminal UI (runs, live, replay, SQL, compare)."
DESCRIPTION = """Open the terminal UI over a store: the runs list (open, filter, sort, mark two
and compare, delete), live dashboards of running runs (also ones a headless
`loadtower run` is writing), replays of past runs, and a read-only SQL console.

keys: 1 runs, 2 SQL console, N start a run, ? keys of the screen, ctrl+p command
palette, t theme, q quit.

examples:
  loadtower tui
  loadtower tui --store results.duckdb --run 20261123-090446-8e64"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_store_argument(parser)
    parser.add_argument("--run", default=None, help="open this run right away")


def run(args: argparse.Namespace) -> int:
    from loadtower.defaults import store_path
    from loadtower.tui.app import LoadtowerApp

    store = store_path(args)
    live = False
    if args.run:
        from loadtower.tui.feed import run_bounds

        try:
            live = run_bounds(store, args.run)[0]["status"] == "running"
        except (KeyError, FileNotFoundError):
            from loadtower.errors import LoadtowerError

            raise LoadtowerError(f"no run '{args.run}' in {store}") from None
    LoadtowerApp(store, open_run=args.run, live=live).run()
    return 0
