"""`loadtower report`: a self-contained HTML page for one run."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import BinaryIO

from loadtower.defaults import add_force_argument, add_store_argument, store_path
from loadtower.store.commands import reads_store

HELP = "Write a self-contained HTML report of a run."
DESCRIPTION = """Write a self-contained HTML report of a run (charts and a results table).

The page is written to a temporary file next to --out and renamed over it once whole.
An existing --out is refused unless --force; a directory, a device, a DuckDB store
(the store in use or any other) is never replaced, and a symbolic link is never
followed (with --force the link itself is replaced).

example:
  loadtower report 20251122-101500-ab12 --out report.html"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_store_argument(parser)
    parser.add_argument("run_id", metavar="RUN")
    parser.add_argument("--out", type=Path, required=True, help="the HTML file to write")
    add_force_argument(parser, "replace --out if it is an existing file (never a store)")


@reads_store
def run(args: argparse.Namespace) -> int:
    from loadtower.store import StoreReader
    from loadtower.store.output_files import check_file, write_file
    from loadtower.store.report_html import render
    from loadtower.store.terminal_text import visible

    store = store_path(args)
    check_file(args.out, protect=[store], force=args.force)  # before the work of rendering
    page = render(StoreReader(store), args.run_id).encode("utf-8", "backslashreplace")

    def write(handle: BinaryIO) -> None:
        handle.write(page)

    write_file(args.out, write, protect=[store], force=args.force)
    print(f"wrote {visible(args.out)}")
    return 0
