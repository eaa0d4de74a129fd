"""The control API: the one module of scenarios the TUI imports (docs: "The rooms").

What the TUI may ask of the orchestrator side, with plain types only:
- the built-in scenarios (`builtin_scenarios`);
- a plan, loaded and rendered as plain text lines for the start-run screen
  (`plan_lines`; bad input raises LoadtowerError naming file, line and key);
- a run's control socket and a command to it (`control_path`, `send`:
  stop, skip_phase, pause_phase, resume_phase; rate N and users N steer a run phase's
  load: its open model's total ops/s, its closed model's users);
- a run started as a headless `loadtower run` child process (`start_run`), which
  the TUI watches through the store and steers through the control socket. The run
  lives on if the TUI is closed, and can be attached to again.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from loadtower.errors import LoadtowerError
from loadtower.scenarios.catalog import builtin_names
from loadtower.scenarios.private_dir import socket_folder

RUN_ID = re.compile(r"run_id: (\S+)")
START_TIMEOUT_S = 120.0
SEND_TIMEOUT_S = 5.0
PLAN_WIDTH = 120
UNIX_PATH_MAX = 100  # sun_path is 108 bytes on Linux; keep a margin
STEER_COMMANDS = ("rate", "users")  # they take a number (the run's control.py too)
COMMANDS = ("stop", "skip_phase", "pause_phase", "resume_phase", *STEER_COMMANDS)


@dataclass
class StartedRun:
    run_id: str
    process: subprocess.Popen[bytes]
    output: Path


def builtin_scenarios() -> list[str]:
    """Names of the built-in scenarios, sorted."""
    return builtin_names()


def plan_lines(scenario: str | Path, inventory: Path, overrides: list[str] | None = None,
               width: int = PLAN_WIDTH) -> list[str]:
    """The plan of `scenario` on `inventory` (with `--set` overrides) as the lines of
    its tables, plain text without styles or control sequences. Every name and value
    in them went through terminal_text.cell (plan.render_plan), so a file cannot
    drive the terminal."""
    from rich.console import Console

    # deferred: the plan loads rich, pydantic and duckdb; the TUI and `loadtower control`
    # import this module
    from loadtower.scenarios.plan import load_plan, render_plan

    plan = load_plan(scenario, inventory, overrides, None)
    console = Console(width=width, markup=False, emoji=False, highlight=False,
                      color_system=None, force_terminal=False, legacy_windows=False,
                      no_color=True)
    with console.capture() as captured:
        console.print(render_plan(plan), crop=True)
    return [line.rstrip() for line in captured.get().splitlines()]


def control_path(store: Path, run_id: str) -> Path:
    """The control socket of run `run_id` writing to `store` (the same path for every
    process that knows both): STORE.d/control/RUN_ID.sock, or, when that is too long for
    a UNIX socket, a path derived from the same two names under /tmp/loadtower-UID."""
    path = Path(f"{Path(store).resolve()}.d") / "control" / f"{run_id}.sock"
    if len(str(path).encode()) <= UNIX_PATH_MAX:
        return path
    digest = hashlib.sha256(str(path).encode()).hexdigest()[:20]
    return socket_folder() / f"{digest}.sock"


async def send_command(path: Path, command: str, timeout: float = SEND_TIMEOUT_S,
                       value: float | None = None) -> str:
    """One JSON line to the run's control socket (orchestrator/control.py serves it) and
    its reply, unchecked (`send` checks the command first)."""
    reader, writer = await asyncio.wait_for(asyncio.open_unix_connection(str(path)), timeout)
    try:
        message: dict[str, object] = {"cmd": command}
        if value is not None:
            message["value"] = value
        writer.write((json.dumps(message) + "\n").encode())
        await writer.drain()
        reply = await asyncio.wait_for(reader.readline(), timeout)
        return str(json.loads(reply).get("reply", ""))
    finally:
        writer.close()


async def send(path: Path, command: str, timeout: float = SEND_TIMEOUT_S,
               value: float | None = None) -> str:
    """Send `command` (one of COMMANDS; `value` for rate and users) to the run listening
    on `path`; its reply ("ok..." when done, else why not). OSError when nothing listens
    there, TimeoutError when it does not answer."""
    if command not in COMMANDS:
        raise LoadtowerError(f"unknown run command '{command}' (one of {', '.join(COMMANDS)})")
    if (value is None) != (command not in STEER_COMMANDS):
        raise LoadtowerError(f"'{command}' takes a number" if value is None
                             else f"'{command}' takes no number")
    return await send_command(path, command, timeout, value)


def start_run(scenario: str, inventory: Path, store: Path, extra: list[str] | None = None,
              timeout: float = START_TIMEOUT_S) -> StartedRun:
    """Start `loadtower run --headless` as a child process writing to `store`; return
    once it has a run id (or raise with its first error line)."""
    logs = Path(f"{Path(store).resolve()}.d") / "tui-runs"
    logs.mkdir(parents=True, exist_ok=True)
    output = logs / f"{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}.log"
    argv = [sys.executable, "-m", "loadtower", "run", scenario, "--inventory", str(inventory),
            "--store", str(store), "--headless", *(extra or [])]
    env = {**os.environ, "COLUMNS": "120", "TERM": "dumb"}
    with open(output, "wb") as sink:
        process = subprocess.Popen(argv, stdout=sink, stderr=subprocess.STDOUT, env=env,
                                   stdin=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            text = output.read_text(errors="replace")
            found = RUN_ID.search(text)
            if found:
                return StartedRun(found.group(1), process, output)
            if process.poll() is not None:
                last = [line for line in text.splitlines() if line.strip()]
                raise LoadtowerError(last[-1] if last
                                     else f"the run exited with {process.returncode}")
            time.sleep(0.2)
    except KeyboardInterrupt:  # Ctrl-C before the run had its id: it stops too
        process.send_signal(signal.SIGINT)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=30)
        raise
    process.terminate()
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    raise LoadtowerError(f"the run did not start within {timeout:g} s (see {output})")


# the name the TUI used before (tui/run_process.py)
start_headless = start_run
