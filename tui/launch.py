"""`loadtower run` with the live TUI: the run itself is a headless child process (so it
survives a TUI crash); the TUI attaches to it. Quitting the TUI stops the run, as
Ctrl-C does in headless mode, and prints its result table."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import subprocess
import sys
from pathlib import Path
from typing import Any

STOP_WAIT_S = 120.0


def _extra(args: argparse.Namespace) -> list[str]:
    extra: list[str] = []
    for item in args.overrides or []:
        extra += ["--set", item]
    if args.scale is not None:
        extra += ["--scale", str(args.scale)]
    if args.name:
        extra += ["--name", args.name]
    if args.accept_new_host_keys:
        extra.append("--accept-new-host-keys")
    if getattr(args, "bootstrap_agents", False):
        extra.append("--bootstrap-agents")
    return extra


def run_live(plan: Any, store: Path, args: argparse.Namespace) -> int | None:
    """None when there is no terminal to draw on (the caller then runs headless).
    `plan` (the caller's loaded plan) is not read here: the child loads it again."""
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        return None
    from loadtower.scenarios.control_api import control_path, send, start_run
    from loadtower.store.terminal_text import visible
    from loadtower.tui.app import LoadtowerApp
    from loadtower.tui.command import run_app

    started = start_run(args.scenario, args.inventory, store, _extra(args))
    control = control_path(store, started.run_id)
    app_code = run_app(LoadtowerApp(store, open_run=started.run_id, live=True,
                                    control_path=control))
    if started.process.poll() is None:
        print(f"stopping run {started.run_id} ...", file=sys.stderr)
        with contextlib.suppress(OSError):  # no socket: the run is already ending
            asyncio.run(send(control, "stop"))
    try:
        code = started.process.wait(timeout=STOP_WAIT_S)
    except subprocess.TimeoutExpired:  # never leave the child behind
        started.process.terminate()
        try:
            code = started.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            started.process.kill()
            code = started.process.wait()
    print(visible(started.output.read_text(errors="replace")), end="")
    return code or app_code  # the run's status; else a crash of the app is not 0
