"""`loadtower report`: placeholder until its implementation lands."""

from __future__ import annotations

import argparse

from loadtower.errors import NotYetAvailable

HELP = "Write a self-contained HTML report of a run."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("rest", nargs=argparse.REMAINDER, help="arguments (not yet available)")


def run(args: argparse.Namespace) -> int:
    raise NotYetAvailable("'report' is not yet available")
