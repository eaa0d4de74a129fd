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
node_samples, agent_samples. Exact percentiles over any window merge the histograms:
hdr_percentile(list(response_hist), 99) in ms, hdr_percentiles(list(...), [50, 99]).
No other file can be read or written and no setting changed. See docs/store.md.

example (p99 per op over one minute of a run):
  loadtower sql "SELECT op, hdr_percentile(list(response_hist), 99) AS p99_ms
    FROM op_second WHERE run_id = '20261124-093011-ab12'
    AND ts BETWEEN 1763977860 AND 1763977919 GROUP BY op ORDER BY op"
"""


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
        from rich.text import Text

        # Text, not str: stored values are shown as they are, never read as Rich markup
        table = Table()
        for column in columns:
            table.add_column(Text(column))
        for row in rows:
            table.add_row(*(Text("" if v is None else str(v)) for v in row))
        Console().print(table)
    return 0
