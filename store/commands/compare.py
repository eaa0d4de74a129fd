"""`loadtower compare`: placeholder until its implementation lands."""

from __future__ import annotations

import argparse

from loadtower.errors import NotYetAvailable

HELP = "Compare two runs per phase and op, with significance."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("rest", nargs=argparse.REMAINDER, help="arguments (not yet available)")


def run(args: argparse.Namespace) -> int:
    raise NotYetAvailable("'compare' is not yet available")
