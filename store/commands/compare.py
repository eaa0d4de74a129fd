"""`loadtower compare`: two runs side by side per phase and op, with significance; or the
engines of one or two runs side by side (experiment 1's table)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from loadtower.defaults import add_store_argument, store_path
from loadtower.errors import LoadtowerError
from loadtower.store.commands import reads_store
from loadtower.store.commands.tables import print_whole
from loadtower.store.engine_text import ENGINE_COLUMNS, ENGINE_TEXT_COLUMNS, engine_lines
from loadtower.store.terminal_text import cell, visible
from loadtower.store.workload_throughput import workload_table

HELP = "Compare two runs per phase and op (significance), or engines (experiment 1's table)."
DESCRIPTION = """Compare runs.

Two runs of the same engine: per phase and op, ops/s and p99 (of the merged
histograms) of A and B, the change, its 99% interval and the verdict: regression,
improvement, no change, or too short to tell (a phase of fewer than 10 seconds or 5
effective samples). The interval accounts for the memory of per-second samples (an
effective sample size from their autocorrelation; docs/statistics.md).

Engines (experiment 1's and study 4's table): per phase (workload) and op type, each
engine's operations, ops/s, average, min, max, median, p90, p95 and p99 latency (ms,
from the merged HDR histograms) and return codes (OK and the errors by class, each
engine's driver errors under their own names), with a 'total' row per engine. Printed
for ONE run of a scenario with several [targets.*] (e.g. the built-ins recipes-mix and
ycsb-suite: one engine, then another), for two runs of different engines, or with
--engines.

examples:
  loadtower compare 20251122-101500-ab12 20251122-103000-cd34
  loadtower compare 20251122-101500-ab12                  # a two-target run (ycsb-suite)
  loadtower compare RUN_A RUN_B --engines --phase mix --latency service
  loadtower compare RUN --curves --json                   # each system's rate at target

Runs with a ramp or a search also get the curve table (achieved ops/s against p50,
p90 and p99 per step, per system) and the rate each system holds at its latency target:
a search's answer, or a ramp's interpolated between its last passing and first failing
step (the 'from' column says which). --curves prints only those."""


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
    parser.add_argument(
        "--curves",
        action="store_true",
        help="only the latency/throughput curves of the ramps and searches and each "
        "system's rate at its target (with --json: {curves, at_target})",
    )


def _num(v: float | None, fmt: str = "{:.2f}") -> str:
    return "" if v is None else fmt.format(v)


def _engines_wanted(args: argparse.Namespace) -> bool:
    # deferred: engine_compare loads duckdb; `loadtower --help` imports this command module
    from loadtower.store.engine_compare import run_sides

    store = store_path(args)
    if args.run_b is None or args.run_b == args.run_a:
        if len(run_sides(store, args.run_a)) < 2 and not args.engines:
            raise LoadtowerError(
                f"run {args.run_a} ran one target: give a second run to compare it with"
            )
        return True
    if args.engines:
        return True
    engines_a = {e for _s, e in run_sides(store, args.run_a)}
    engines_b = {e for _s, e in run_sides(store, args.run_b)}
    return engines_a != engines_b or len(engines_a) > 1


def _table(title: str, columns: tuple[str, ...], text_columns: tuple[str, ...]) -> Any:
    """A Rich table whose text columns fold (never cut short with an ellipsis)."""
    from rich.table import Table

    table = Table(title=cell(title), title_justify="left")
    for column in columns:
        if column in text_columns:
            table.add_column(column, justify="left", overflow="fold")
        else:
            table.add_column(column, justify="right", no_wrap=True)
    return table


def _print_engines(args: argparse.Namespace) -> int:
    # deferred: these load duckdb; `loadtower --help` imports this command module
    from loadtower.store.commands.curve_text import print_curves
    from loadtower.store.engine_compare import engine_table

    runs = [args.run_a] + ([args.run_b] if args.run_b and args.run_b != args.run_a else [])
    rows = engine_table(store_path(args), runs, args.phase, args.latency)
    if not rows:
        raise LoadtowerError(f"no ops stored for run(s) {visible(', '.join(runs))}: nothing to "
                             "compare")  # fmt: skip
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    title = (
        f"{' vs '.join(runs)}: per op type and engine ({args.latency} time, ms; "
        "'total' merges every op)"
    )
    table = _table(title, ENGINE_COLUMNS, ENGINE_TEXT_COLUMNS)
    for new_phase, cells in engine_lines(rows):
        if new_phase:
            table.add_section()
        table.add_row(*(cell(text) if column in ENGINE_TEXT_COLUMNS else text
                        for column, text in zip(ENGINE_COLUMNS, cells, strict=True)))
    print_whole(table)
    _print_workloads(rows)
    return print_curves(store_path(args), runs, as_json=False, only_if_any=True)


def _print_workloads(rows: list[dict[str, Any]]) -> None:
    """Study 4's table last: throughput per workload phase and engine (ops/s)."""
    from rich.table import Table

    headers, cells = workload_table(rows)
    if cells:
        table = Table(title="Throughput per workload (ops/s)", title_justify="left")
        table.add_column(headers[0], justify="left", overflow="fold")
        for header in headers[1:]:  # engine names from the store: never markup
            table.add_column(cell(header), justify="right", no_wrap=True)
        for row in cells:
            table.add_row(cell(row[0]), *row[1:])
        print_whole(table)


def _nothing_in_common(args: argparse.Namespace) -> Exception:
    """One line naming what each run has, when no (phase, op) is in both."""
    # deferred: the reader loads duckdb; `loadtower --help` imports this command module
    from loadtower.store import StoreReader

    reader = StoreReader(store_path(args))
    have = []
    for side, run_id in (("A", args.run_a), ("B", args.run_b)):
        phases = sorted({r["phase"] for r in reader.phase_summary(run_id)})
        have.append(f"{side} {', '.join(phases) if phases else 'none with ops'}")
    return LoadtowerError(
        visible(f"runs {args.run_a} and {args.run_b} have no phase (with the same op) in common, "
                f"nothing to compare (phases: {'; '.join(have)})", keep_newlines=False)
    )  # fmt: skip


@reads_store
def run(args: argparse.Namespace) -> int:
    # deferred: these load duckdb; `loadtower --help` imports this command module
    from loadtower.store import compare_runs
    from loadtower.store.commands.curve_text import print_curves
    from loadtower.store.compare import interval_text

    if args.curves:
        runs = [args.run_a] + ([args.run_b] if args.run_b and args.run_b != args.run_a else [])
        return print_curves(store_path(args), runs, as_json=args.json, only_if_any=False)
    if _engines_wanted(args):
        return _print_engines(args)
    rows = compare_runs(store_path(args), args.run_a, args.run_b)
    if not rows:
        raise _nothing_in_common(args)
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    columns: tuple[str, ...] = (
        "phase", "op", "ops/s A", "ops/s B", "change", "99% interval", "verdict",
        "p99 ms A", "p99 ms B", "change", "99% interval", "verdict")
    # an engine's tombstones scanned per read (p99) of the phase's table, where sampled
    tombstones = any(r[f"tombstones_p99_{s}"] is not None for r in rows for s in "ab")
    if tombstones:
        columns += ("tombstones/read p99 A", "tombstones/read p99 B")
    title = (f"{args.run_a} (A) vs {args.run_b} (B): change from A to B, its 99% interval "
             "and verdict (autocorrelation-aware)")
    table = _table(title, columns, ("phase", "op", "verdict"))
    for r in rows:
        more = (_num(r["tombstones_p99_a"], "{:.1f}"), _num(r["tombstones_p99_b"], "{:.1f}"))
        table.add_row(
            cell(r["phase"]), cell(r["op"]), _num(r["ops_per_s_a"], "{:.1f}"), _num(r["ops_per_s_b"], "{:.1f}"),
            _num(r["ops_change_pct"], "{:+.1f}%"), interval_text(r["ops_change_ci_pct"]),
            r["ops_verdict"], _num(r["p99_ms_a"]), _num(r["p99_ms_b"]),
            _num(r["p99_change_pct"], "{:+.1f}%"), interval_text(r["p99_change_ci_pct"]),
            r["p99_verdict"], *(more if tombstones else ()),
        )  # fmt: skip
    print_whole(table)
    return print_curves(store_path(args), [args.run_a, args.run_b], False, only_if_any=True)
