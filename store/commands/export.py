"""`loadtower export`: placeholder until its implementation lands."""

from __future__ import annotations

import argparse

from loadtower.errors import NotYetAvailable

HELP = "Export a run's samples as Parquet or CSV."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("rest", nargs=argparse.REMAINDER, help="arguments (not yet available)")


def run(args: argparse.Namespace) -> int:
    raise NotYetAvailable("'export' is not yet available")
