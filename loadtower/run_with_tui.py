"""`loadtower run`: the orchestrator room's run command, shown in the live TUI when the tui
room is installed and the terminal allows (the CLI room composes the two: the orchestrator
room does not import the TUI)."""

from __future__ import annotations

import argparse

from loadtower.orchestrator import run_command
from loadtower.orchestrator.run_command import DESCRIPTION, HELP, add_arguments

__all__ = ["DESCRIPTION", "HELP", "add_arguments", "run"]


def run(args: argparse.Namespace) -> int:
    try:
        # deferred: an install without the tui room runs headless (the ImportError below)
        from loadtower.tui.launch import run_live
    except ImportError:  # an install without the tui room: headless
        return run_command.run(args)
    return run_command.run(args, run_live)
