"""`loadtower report`: a self-contained HTML page for one run."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import BinaryIO

from loadtower.defaults import add_force_argument, add_store_argument, store_path
from loadtower.store.commands import reads_store
from loadtower.store.output_files import check_file, write_file
from loadtower.store.terminal_text import visible

HELP = "Write a self-contained HTML report of a run (or of two runs compared)."
DESCRIPTION = """Write a self-contained HTML report of a run: a summary with the answer (the rate
each target holds at its latency target, the winner), charts and tables (docs/report.md).
With a second run: B against A per phase and op (as `loadtower compare A B`), both
runs' curves on one chart, then each run's report. The page opens offline.

The page is written to a temporary file next to --out and renamed over it once whole.
An existing --out is refused unless --force; a directory, a device, a DuckDB store
(the store in use or any other) is never replaced, and a symbolic link is never
followed (with --force the link itself is replaced).

examples:
  loadtower report 20251122-101500-ab12 --out report.html
  loadtower report 20251122-101500-ab12 20251122-103000-cd34 --out both.html"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_store_argument(parser)
    parser.add_argument("run_id", metavar="RUN")
    parser.add_argument("run_b", metavar="RUN_B", nargs="?", help="a second run, compared")
    parser.add_argument("--out", type=Path, required=True, help="the HTML file to write")
    add_force_argument(parser, "replace --out if it is an existing file (never a store)")


@reads_store
def run(args: argparse.Namespace) -> int:
    # deferred: these load duckdb; `loadtower --help` imports this command module
    from loadtower.store import StoreReader
    from loadtower.store.report_html import render, render_pair

    store = store_path(args)
    check_file(args.out, protect=[store], force=args.force)  # before the work of rendering
    reader = StoreReader(store)
    if args.run_b is None or args.run_b == args.run_id:
        html = render(reader, args.run_id)
    else:
        html = render_pair(reader, args.run_id, args.run_b)
    page = html.encode("utf-8", "backslashreplace")

    def write(handle: BinaryIO) -> None:
        handle.write(page)

    write_file(args.out, write, protect=[store], force=args.force)
    print(f"wrote {visible(args.out)}")
    return 0
