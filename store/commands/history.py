"""`loadtower history SCENARIO`: a scenario's runs in time order, one figure each, and the
change points in them (store/history.py, store/change_points.py)."""

from __future__ import annotations

import argparse
import json
import time

from loadtower.defaults import add_store_argument, store_path
from loadtower.store.commands.tables import print_whole
from loadtower.store.history_metrics import METRICS
from loadtower.store.terminal_text import cell

HELP = "A scenario's runs in time order with one figure each, and its change points."
DESCRIPTION = """The completed runs of a scenario (by its name), oldest first, with one figure of
one phase each (the figure phase_summary shows: --op for one op, default every op of
the phase merged), and the change points of that series: where the figure moved to
a new level, found by E-divisive means with a Student t-test on the runs either side
(docs/store.md, "Run history"). Each change point names the run where the new level
starts, its size and whether it is a regression (p99 up, ops/s down) or an improvement.
Runs whose settings (the scenario after --set/--scale, the inventory) differ from the
most common ones are marked '*'; --same-settings leaves them out.

examples:
  loadtower history quickstart
  loadtower history quickstart --phase ycsb-a --op read --metric p99
  loadtower history quickstart --metric ops_per_s --same-settings --json"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_store_argument(parser)
    parser.add_argument("scenario", metavar="SCENARIO", help="the scenario's name")
    parser.add_argument("--phase", help="the phase (default: the latest run's first run phase)")
    parser.add_argument("--op", help="one op (default: every op of the phase merged)")
    parser.add_argument("--metric", choices=list(METRICS), default="p99",
                        help="the figure (default p99; latency in ms)")  # fmt: skip
    parser.add_argument("--same-settings", action="store_true",
                        help="only the runs with the most common settings")  # fmt: skip
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")


def _num(value: float | None, unit: str) -> str:
    if value is None:
        return ""
    if unit == "ms":
        return f"{value:.2f}"  # as the result table, compare and the report print it
    return f"{value:.4f}" if unit == "" else f"{value:,.1f}"


def run(args: argparse.Namespace) -> int:
    from rich.table import Table

    # deferred: history loads duckdb; `loadtower --help` imports this command module
    from loadtower.store.history import run_history

    history = run_history(store_path(args), args.scenario, args.metric, args.op, args.phase,
                          args.same_settings)  # fmt: skip
    if args.json:
        print(json.dumps(history.as_dict(), indent=2))
        return 0
    starts = {c.index: c for c in history.change_points}
    what = f"{args.metric} ({history.unit})" if history.unit else args.metric
    title = (f"{history.scenario}: {what} of phase {history.phase}, "
             f"{history.op or 'every op'}; * = settings differ from most runs")  # fmt: skip
    table = Table(title=cell(title), title_justify="left")
    for name in ("#", "run", "started", "settings", args.metric, "change point"):
        table.add_column(name, no_wrap=name == "run",
                         justify="right" if name in ("#", args.metric) else "left")  # fmt: skip
    for r in history.runs:
        change = starts.get(r.index)
        mark = (f"{change.direction} {change.change_pct:+.1f}% "
                f"({_num(change.before, history.unit)} -> {_num(change.after, history.unit)})"
                if change else "")  # fmt: skip
        started = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(r.started)) if r.started else ""
        table.add_row(str(r.index), cell(r.id), started, r.settings + (" *" if r.differs else ""),
                      _num(r.value, history.unit), mark)  # fmt: skip
    print_whole(table)
    if not history.change_points:
        print(f"no change point in {len(history.runs)} runs")
    return 0
