"""`loadtower command`: placeholder until its implementation lands."""

from __future__ import annotations

import argparse

from loadtower.errors import NotYetAvailable

HELP = "Open the terminal UI (runs, live, replay, SQL, compare)."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("rest", nargs=argparse.REMAINDER, help="arguments (not yet available)")


def run(args: argparse.Namespace) -> int:
    raise NotYetAvailable("'command' is not yet available")
