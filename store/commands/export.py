"""`loadtower export`: a run's samples as Parquet or CSV files."""

from __future__ import annotations

import argparse
from pathlib import Path

from loadtower.defaults import add_force_argument, add_store_argument, store_path
from loadtower.store.commands import reads_store
from loadtower.store.terminal_text import visible

HELP = "Export a run's samples as Parquet or CSV, or its latencies as HDR interval logs."
DESCRIPTION = """Export a run's samples as Parquet or CSV files, one per table or view
(run, phases, events, logs, op_intervals, op_seconds, op_second_hists, node_seconds,
node_stats, agent_samples, phase_summary), into the folder --out (made if missing).

Each file is written to a temporary file in --out and renamed once whole. Files that
already exist are refused (nothing is written) unless --force; a directory, a device or
a DuckDB store is never replaced, and a symbolic link in --out is never followed (with
--force the link itself is replaced, its target is left alone).

--format hlog writes HdrHistogram interval logs instead: one PHASE.OP.hlog per phase and
op, a line per second (its merged response-time histogram; `Tag=service` lines the
service time), in microseconds, as latte, NoSQLBench and other load tools write them;
HdrHistogram's HistogramLogProcessor reads them (-outputValueUnitRatio 1000 for ms).

examples:
  loadtower export 20251122-101500-ab12 --format csv --out exports/ab12
  loadtower export 20251122-101500-ab12 --format hlog --out hlogs/ab12"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_store_argument(parser)
    parser.add_argument("run_id", metavar="RUN")
    parser.add_argument("--format", choices=("parquet", "csv", "hlog"), default="parquet")
    parser.add_argument("--out", type=Path, required=True, help="directory to write into")
    add_force_argument(parser, "replace files of the same names in --out (never a store)")


@reads_store
def run(args: argparse.Namespace) -> int:
    # deferred: these load duckdb; `loadtower --help` imports this command module
    from loadtower.store.export import export_run
    from loadtower.store.hlog import export_hlogs

    if args.format == "hlog":
        logs = export_hlogs(store_path(args), args.run_id, args.out, force=args.force)
        for name, n in logs.items():
            print(f"{visible(args.out / name)}: {n} seconds")
        return 0
    counts = export_run(store_path(args), args.run_id, args.format, args.out, force=args.force)
    for name, n in counts.items():
        print(f"{visible(args.out / (name + '.' + args.format))}: {n} rows")
    return 0
