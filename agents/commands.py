"""`loadtower agent`: placeholder until its implementation lands."""

from __future__ import annotations

import argparse

from loadtower.errors import NotYetAvailable

HELP = "Run the load agent on this host (interval lines as JSON on stdout)."


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("rest", nargs=argparse.REMAINDER, help="arguments (not yet available)")


def run(args: argparse.Namespace) -> int:
    raise NotYetAvailable("'agent' is not yet available")
