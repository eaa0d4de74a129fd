"""`loadtower export`: a run's samples as Parquet or CSV files."""

from __future__ import annotations

import argparse
from pathlib import Path

from loadtower.defaults import add_store_argument, store_path

HELP = "Export a run's samples as Parquet or CSV."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_store_argument(parser)
    parser.add_argument("run_id", metavar="RUN")
    parser.add_argument("--format", choices=("parquet", "csv"), default="parquet")
    parser.add_argument("--out", type=Path, required=True, help="directory to write into")


def run(args: argparse.Namespace) -> int:
    from loadtower.store.export import export_run

    counts = export_run(store_path(args), args.run_id, args.format, args.out)
    for name, n in counts.items():
        print(f"{args.out / (name + '.' + args.format)}: {n} rows")
    return 0
