"""`loadtower compare`: two runs side by side per phase and op, with significance."""

from __future__ import annotations

import argparse
import json

from loadtower.defaults import add_store_argument, store_path

HELP = "Compare two runs per phase and op, with significance."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_store_argument(parser)
    parser.add_argument("run_a", metavar="RUN_A")
    parser.add_argument("run_b", metavar="RUN_B")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")


def _num(v: float | None, fmt: str = "{:.2f}") -> str:
    return "" if v is None else fmt.format(v)


def run(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.table import Table

    from loadtower.store import compare_runs

    rows = compare_runs(store_path(args), args.run_a, args.run_b)
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    table = Table("phase", "op", "ops/s A", "ops/s B", "change", "p99 ms A", "p99 ms B", "change",
                  title=f"{args.run_a} (A) vs {args.run_b} (B); * = significant (Welch, p<0.01)")  # fmt: skip
    for r in rows:
        mark_o = " *" if r["significant_ops"] else ""
        mark_p = " *" if r["significant_p99"] else ""
        table.add_row(
            r["phase"], r["op"], _num(r["ops_per_s_a"], "{:.1f}"), _num(r["ops_per_s_b"], "{:.1f}"),
            _num(r["ops_change_pct"], "{:+.1f}%") + mark_o, _num(r["p99_ms_a"]),
            _num(r["p99_ms_b"]), _num(r["p99_change_pct"], "{:+.1f}%") + mark_p,
        )  # fmt: skip
    Console().print(table)
    return 0
