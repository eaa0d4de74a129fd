"""`loadtower tui`: the terminal UI over a store."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from loadtower.defaults import add_store_argument, store_path
from loadtower.errors import LoadtowerError

if TYPE_CHECKING:
    from textual.app import App

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


def require_terminal() -> None:
    """The TUI draws on a terminal and reads keys from one: without one (piped, cron,
    CI) it would wait for input that never comes, so it says so and stops."""
    import sys

    missing = [name for name, stream in (("stdin", sys.stdin), ("stdout", sys.stdout))
               if stream is None or not stream.isatty()]
    if missing:
        raise LoadtowerError(
            f"{' and '.join(missing)} {'is' if len(missing) == 1 else 'are'} not a terminal: "
            "the TUI needs one (for scripts use 'loadtower runs', 'loadtower report' or "
            "'loadtower sql')")


def run(args: argparse.Namespace) -> int:
    # deferred: textual is imported only when the TUI starts (not for `loadtower --help`)
    from loadtower.tui.app import LoadtowerApp

    require_terminal()
    store = store_path(args)
    live = False
    if args.run:
        # deferred: live_feed loads duckdb, only for --run
        from loadtower.store.live_feed import run_bounds

        try:
            live = run_bounds(store, args.run)[0]["status"] == "running"
        except (KeyError, FileNotFoundError):
            raise LoadtowerError(f"no run '{args.run}' in {store}") from None
    return run_app(LoadtowerApp(store, open_run=args.run, live=live))


def run_app(app: App[None], headless: bool = False) -> int:
    """Run `app`; its exit status: a crash (Textual prints its traceback) is 1, never 0."""
    app.run(headless=headless)
    return app.return_code or 0
