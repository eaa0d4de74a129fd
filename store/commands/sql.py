"""`loadtower sql`: run a read-only SQL query over the store."""

from __future__ import annotations

import argparse
import csv
import json
import sys

from loadtower.defaults import add_store_argument, store_path

HELP = "Run a read-only SQL query over the store."
DESCRIPTION = """Run one read-only SQL query (SELECT, EXPLAIN, PRAGMA) over the store.

Views: op_seconds, node_seconds, phase_summary. Tables: runs, phases, events, logs,
op_intervals (per agent), op_second / op_minute / op_phase (merged, with HDR histograms),
node_samples, agent_samples. See docs/store.md."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_store_argument(parser)
    parser.add_argument("query", help="the SQL query")
    parser.add_argument("--format", choices=("table", "csv", "json"), default="table")


def run(args: argparse.Namespace) -> int:
    from loadtower.store import StoreReader

    columns, rows = StoreReader(store_path(args)).sql(args.query)
    if args.format == "json":
        print(json.dumps([dict(zip(columns, r, strict=True)) for r in rows], default=str))
    elif args.format == "csv":
        out = csv.writer(sys.stdout)
        out.writerow(columns)
        out.writerows(rows)
    else:
        from rich.console import Console
        from rich.table import Table

        table = Table(*columns)
        for row in rows:
            table.add_row(*("" if v is None else str(v) for v in row))
        Console().print(table)
    return 0
