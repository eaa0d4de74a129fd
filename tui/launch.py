"""`loadtower run` with the live TUI: the run itself is a headless child process (so it
survives a TUI crash); the TUI attaches to it. Quitting the TUI stops the run, as
Ctrl-C does in headless mode, and prints its result table. A SIGINT or SIGTERM to this
process is passed on to the run (in a session of its own, a terminal's signals do not
reach it): the first stops its load at once and closes the TUI, a second makes the run
exit at once; the exit status is then the run's (130 for SIGINT)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from loadtower.scenarios.control_api import control_path, send, start_run
from loadtower.store.terminal_text import visible
from loadtower.tui.command import run_app

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
    if getattr(args, "metrics_address", None):
        extra += ["--metrics-address", args.metrics_address]
    if getattr(args, "no_metrics", False):
        extra.append("--no-metrics")
    return extra


def run_live(plan: Any, store: Path, args: argparse.Namespace) -> int | None:
    """None when there is no terminal to draw on (the caller then runs headless).
    `plan` (the caller's loaded plan) is not read here: the child loads it again."""
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        return None
    # deferred: textual is imported only when the TUI starts (a headless run imports this too)
    from loadtower.tui.app import LoadtowerApp

    started = start_run(args.scenario, args.inventory, store, _extra(args))
    control = control_path(store, started.run_id)
    app = LoadtowerApp(store, open_run=started.run_id, live=True, control_path=control)
    with passed_on(started.process, app) as signals:
        app_code = run_app(app)
        if started.process.poll() is None and not signals:
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


@contextlib.contextmanager
def passed_on(child: subprocess.Popen[bytes], app: Any) -> Iterator[list[int]]:
    """While in the block, SIGINT and SIGTERM to this process go to `child` (the run) and
    close `app` (the TUI); yields the list of the signals received."""
    received: list[int] = []

    def handler(signum: int, _frame: object) -> None:
        received.append(signum)
        if child.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(child.pid, signum)
        loop = asyncio._get_running_loop()  # the TUI's, when it is running
        if loop is not None:
            loop.call_soon_threadsafe(app.exit)

    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield received
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)
