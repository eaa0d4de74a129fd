"""`loadtower check SCENARIO --inventory INV`: validate both files and print the plan."""

from __future__ import annotations

import argparse
from pathlib import Path

from loadtower.store.terminal_text import markup_safe, table_console, visible

HELP = "Validate a scenario and an inventory and print the plan."
DESCRIPTION = """Validate a scenario (a file, or a built-in name such as 'quickstart') and an
inventory, then print the plan. A bad file gives one line naming file, line and
key, and exit code 2. What the run will need from this machine and is missing (an
SSH key or known_hosts file, a password variable) is a warning line on stderr.
A workload file the scenario names ([workloads.NAME] file = "...", docs/workloads.md)
is shown too: its tables' DDL, each op's statement per engine, its bindings and an
example row.

example:
  loadtower check quickstart --inventory .sandbox/inventory.toml"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "scenario",
        help="scenario TOML file, built-in scenario name, or a YCSB property file / workload "
        "file run as it is (YCSB's client defaults: docs/workloads.md)",
    )
    parser.add_argument("--inventory", "-i", type=Path, required=True, help="inventory TOML file")
    parser.add_argument(
        "--set",
        dest="overrides",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="override a scenario value, e.g. dataset.records=1000000 (repeatable)",
    )
    parser.add_argument(
        "--scale",
        type=float,
        default=None,
        help="multiply the dataset size (and load phases' record counts)",
    )
    parser.add_argument(
        "--brief",
        action="store_true",
        help="the plan only (hosts and phases), without each workload's DDL, statements "
        "and bindings (what `loadtower demo` prints before its run)",
    )


def run(args: argparse.Namespace) -> int:
    import sys

    # deferred: these load pydantic, rich and duckdb (the plan); `loadtower --help` imports this
    # command module
    from loadtower.scenarios.environment_checks import environment_warnings
    from loadtower.scenarios.plan import load_plan, render_plan

    plan = load_plan(args.scenario, args.inventory, args.overrides, args.scale)
    console = table_console()
    console.print(render_plan(plan))
    # deferred: these load pydantic, rich, duckdb and numpy; `loadtower --help` imports this
    # command module
    from loadtower.scenarios.workloads.dataset_files import outside_datasets
    from loadtower.scenarios.workloads.describe import describe

    for name, checked in plan.workloads.items():
        if not getattr(args, "brief", False):
            console.print(describe(name, checked, plan.scenario))
        for dataset, path in outside_datasets(checked).items():
            console.print(f"workload {markup_safe(name)}: data set {markup_safe(dataset)} "
                          f"reads {markup_safe(path)} (allow_outside = true: outside the "
                          "workload file's folder)", soft_wrap=True)
    # deferred: thresholds loads pydantic (the scenario's models); `loadtower --help` imports
    # this command module
    from loadtower.scenarios.thresholds import threshold_lines

    lines = threshold_lines(plan.scenario)
    if lines:  # [[thresholds]]: what fails the run (exit 1 from a headless run)
        console.print("thresholds (a breach fails a headless run, exit 1):", markup=False)
        for line in lines:
            console.print(f"  {visible(line, keep_newlines=False)}", markup=False,
                          highlight=False)  # fmt: skip
    for warning in environment_warnings(plan):
        print(f"loadtower check: warning: {visible(warning, keep_newlines=False)}", file=sys.stderr)
    paths = f"{markup_safe(plan.scenario_path)} and {markup_safe(plan.inventory_path)}"
    console.print(f"[green]ok[/green]: {paths} are valid")
    return 0
