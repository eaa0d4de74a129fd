"""`loadtower runs`: list the runs in the store."""

from __future__ import annotations

import argparse
import json
import time

from loadtower.defaults import add_store_argument, store_path

HELP = "List the runs in the store."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_store_argument(parser)
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")


def _when(ts: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts)) if ts else ""


def run(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.table import Table

    from loadtower.store import StoreReader

    runs = StoreReader(store_path(args)).runs()
    if args.json:
        print(json.dumps(runs, indent=2, default=str))
        return 0
    table = Table("id", "name", "scenario", "status", "started", "duration", "reason")
    for r in runs:
        took = f"{r['ended'] - r['started']:.0f} s" if r["ended"] and r["started"] else ""
        table.add_row(r["id"], r["name"], r["scenario"], r["status"], _when(r["started"]), took,
                      r["reason"] or "")  # fmt: skip
    Console().print(table)
    return 0
