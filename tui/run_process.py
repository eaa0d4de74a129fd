"""Runs started from the TUI: a headless `loadtower run` child process the TUI watches
through the store and steers through the run's control socket. The run lives on if
the TUI is closed, and can be attached to again."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from loadtower.errors import LoadtowerError

RUN_ID = re.compile(r"run_id: (\S+)")
START_TIMEOUT_S = 120.0


@dataclass
class StartedRun:
    run_id: str
    process: subprocess.Popen[bytes]
    output: Path


def start_headless(scenario: str, inventory: Path, store: Path, extra: list[str] | None = None,
                   timeout: float = START_TIMEOUT_S) -> StartedRun:
    """Start the run; return once it has a run id (or raise with its first error line)."""
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
    while time.monotonic() < deadline:
        text = output.read_text(errors="replace")
        found = RUN_ID.search(text)
        if found:
            return StartedRun(found.group(1), process, output)
        if process.poll() is not None:
            last = [line for line in text.splitlines() if line.strip()]
            raise LoadtowerError(last[-1] if last else f"the run exited with {process.returncode}")
        time.sleep(0.2)
    process.terminate()
    raise LoadtowerError(f"the run did not start within {timeout:g} s (see {output})")
