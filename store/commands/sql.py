"""`loadtower sql`: run a read-only SQL query over the store."""

from __future__ import annotations

import argparse
import csv
import json
import sys
from typing import Any

from loadtower.defaults import add_store_argument, store_path
from loadtower.store.commands import reads_store
from loadtower.store.commands.interruptible import run_cancellable
from loadtower.store.commands.tables import print_whole
from loadtower.store.terminal_text import cell, visible

HELP = "Run a read-only SQL query over the store."
DESCRIPTION = """Run one read-only SQL query (SELECT, EXPLAIN, PRAGMA) over the store.

Views: op_seconds, node_seconds, phase_summary. Tables: runs, phases, events, logs,
op_intervals (per agent), op_second / op_minute / op_phase (merged, with HDR histograms),
node_samples, node_stats (the database's own figures per node), agent_samples. Exact
percentiles over any window merge the histograms: hdr_percentile(list(response_hist), 99)
in ms, hdr_percentiles(list(...), [50, 99]).
No other file can be read or written and no setting changed. See docs/store.md.

Ctrl-C stops a running query at once (exit 130).

Stored text is never sent to the terminal raw, in every format: control characters
(ESC, CR, DEL, C1), bidi overrides, zero-width characters and text that is not UTF-8
are spelled out as \\x1b, \\x0d, \\u202e, \\udcff: in the table, in --format csv (the
other characters as they are) and in --format json (JSON's own escapes, \\u001b). For
the exact stored bytes, write files with `loadtower export`.

example (p99 per op over one minute of a run):
  loadtower sql "SELECT op, hdr_percentile(list(response_hist), 99) AS p99_ms
    FROM op_second WHERE run_id = '20261124-093011-ab12'
    AND ts BETWEEN 1763977860 AND 1763977919 GROUP BY op ORDER BY op"
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_store_argument(parser)
    parser.add_argument("query", help="the SQL query")
    parser.add_argument(
        "--format",
        choices=("table", "csv", "json"),
        default="table",
        help="table (default), csv or json; control characters are spelled out in all three",
    )


def _csv_value(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, float)):
        return value
    return visible(value)


@reads_store
def run(args: argparse.Namespace) -> int:
    # deferred: the reader loads duckdb; `loadtower --help` imports this command module
    from loadtower.store import StoreReader

    reader = StoreReader(store_path(args))
    columns, rows = run_cancellable(lambda cancel: reader.sql(args.query, cancel=cancel))
    if args.format == "json":
        # ensure_ascii: every character beyond ASCII (control characters, surrogates
        # included) is written as JSON's \\uXXXX escape, never raw
        print(json.dumps([dict(zip(columns, r, strict=True)) for r in rows], default=str,
                         ensure_ascii=True))  # fmt: skip
    elif args.format == "csv":
        out = csv.writer(sys.stdout, lineterminator="\n")  # no CR on a terminal
        out.writerow([visible(c) for c in columns])
        out.writerows([_csv_value(v) for v in row] for row in rows)
    else:
        from rich.table import Table

        table = Table()
        for column in columns:  # fold: on a narrow terminal a long value wraps, never cut
            table.add_column(cell(column), overflow="fold")
        for row in rows:
            table.add_row(*(cell(v) for v in row))
        print_whole(table)
    return 0
