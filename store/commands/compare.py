"""`loadtower compare`: two runs side by side per phase and op, with significance; or the
engines of one or two runs side by side (experiment 1's table)."""

from __future__ import annotations

import argparse
import json

from loadtower.defaults import add_store_argument, store_path

HELP = "Compare two runs per phase and op (significance), or engines (experiment 1's table)."
DESCRIPTION = """Compare runs.

Two runs of the same engine: per phase and op, ops/s and p99 of A and B, the change,
and whether it is significant (Welch's t-test over the per-second samples, p < 0.01).

Engines (experiment 1's table): per phase and op type, each engine's ops/s, median,
p90 and min latency (ms, from the merged HDR histograms), with a 'total' row per
engine. Printed for ONE run of a scenario with several [targets.*] (e.g. the built-in
recipes-mix: Cassandra, then ClickHouse), for two runs of different engines, or with
--engines.

examples:
  loadtower compare 20251122-101500-ab12 20251122-103000-cd34
  loadtower compare 20251122-101500-ab12                  # a two-target run
  loadtower compare RUN_A RUN_B --engines --phase mix --latency service"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_store_argument(parser)
    parser.add_argument("run_a", metavar="RUN_A")
    parser.add_argument(
        "run_b", metavar="RUN_B", nargs="?", help="omit to compare the targets of RUN_A"
    )
    parser.add_argument(
        "--engines", action="store_true", help="the engines table even for runs of one engine"
    )
    parser.add_argument("--phase", help="engines table: only this phase (name without target)")
    parser.add_argument(
        "--latency",
        choices=["response", "service"],
        default="response",
        help="engines table: response time (from the intended start, default) or service time",
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")


def _num(v: float | None, fmt: str = "{:.2f}") -> str:
    return "" if v is None else fmt.format(v)


def _engines_wanted(args: argparse.Namespace) -> bool:
    from loadtower.errors import LoadtowerError
    from loadtower.store.engine_compare import run_sides

    store = store_path(args)
    if args.run_b is None or args.run_b == args.run_a:
        if len(run_sides(store, args.run_a)) < 2:
            raise LoadtowerError(
                f"run {args.run_a} ran one target: give a second run to compare it with"
            )
        return True
    if args.engines:
        return True
    engines_a = {e for _s, e in run_sides(store, args.run_a)}
    engines_b = {e for _s, e in run_sides(store, args.run_b)}
    return engines_a != engines_b or len(engines_a) > 1


def _print_engines(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.table import Table

    from loadtower.store.engine_compare import engine_table

    runs = [args.run_a] + ([args.run_b] if args.run_b and args.run_b != args.run_a else [])
    rows = engine_table(store_path(args), runs, args.phase, args.latency)
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    title = (
        f"{' vs '.join(runs)}: per op type and engine ({args.latency} time, ms; "
        "'total' merges every op)"
    )
    table = Table(title=title, title_justify="left")
    for column in ("phase", "op", "engine", "ops/s", "median", "p90", "min", "errors"):
        table.add_column(column, justify="left" if column in ("phase", "op", "engine") else "right")
    previous: tuple[str, str] | None = None
    for r in rows:
        key = (r["phase"], r["op"])
        if previous is not None and key[0] != previous[0]:
            table.add_section()
        label = r["target"] if r["target"] == r["engine"] else f"{r['target']} ({r['engine']})"
        table.add_row(
            r["phase"] if key != previous else "",
            r["op"] if key != previous else "",
            label,
            f"{r['ops_per_s']:,.1f}",
            _num(r["median_ms"]),
            _num(r["p90_ms"]),
            _num(r["min_ms"], "{:.3f}"),
            f"{r['errors']:,}",
        )
        previous = key
    Console(width=max(100, Console().width)).print(table)
    return 0


def run(args: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.table import Table

    from loadtower.store import compare_runs

    if _engines_wanted(args):
        return _print_engines(args)
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
