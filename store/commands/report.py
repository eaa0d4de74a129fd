"""`loadtower report`: a self-contained HTML page for one run."""

from __future__ import annotations

import argparse
from pathlib import Path

from loadtower.defaults import add_store_argument, store_path

HELP = "Write a self-contained HTML report of a run."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_store_argument(parser)
    parser.add_argument("run_id", metavar="RUN")
    parser.add_argument("--out", type=Path, required=True, help="the HTML file to write")


def run(args: argparse.Namespace) -> int:
    from loadtower.store.report_html import write_report

    write_report(store_path(args), args.run_id, args.out)
    print(f"wrote {args.out}")
    return 0
