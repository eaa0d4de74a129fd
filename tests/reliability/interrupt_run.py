"""Helpers of the Ctrl-C tests: `loadtower run --headless` as a child in its own process
group (a terminal's Ctrl-C reaches the whole foreground group: the run and the Locust
master it started), the moment its run phase has load, and what the store kept."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from loadtower.store import StoreReader

PHASE = "ycsb-a"  # quickstart's run phase


def run_processes(run_id: str) -> dict[int, str]:
    """Processes of this machine (the sandbox's agent host is this machine, reached over
    its sshd) that belong to the run, by the run marker in their environment or argv."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes().split(b"\0")
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state == "Z":
            continue
        if f"LOADTOWER_RUN={run_id}".encode() in environ or f"--lt-run {run_id}" in cmdline:
            found[int(entry.name)] = cmdline
    return found


class InterruptibleRun:
    """quickstart with a long run phase at a fixed rate, in a new session."""

    def __init__(self, inventory: Path, store: Path, log_dir: Path, *extra: str) -> None:
        self.store = store
        self.err_path = log_dir / "run.stderr"
        self._out = open(log_dir / "run.stdout", "w")  # noqa: SIM115 - closed in stop()
        self._err = open(self.err_path, "w")  # noqa: SIM115
        argv = [sys.executable, "-m", "loadtower", "run", "quickstart", "--inventory",
                str(inventory), "--headless", "--store", str(store),
                "--set", "dataset.records=2000", "--set", "phases[1].duration=300s",
                "--set", "phases[1].rate=200", *extra]
        self.proc = subprocess.Popen(argv, stdout=self._out, stderr=self._err,
                                     stdin=subprocess.DEVNULL, start_new_session=True)
        self.run_id = ""

    def wait_for_load(self, seconds: int, timeout: float = 300) -> str:
        """Until the run phase has `seconds` stored seconds with ops; the run id."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"the run ended ({self.proc.returncode}) before its run "
                                     f"phase had load: {self.log()[-2000:]}")
            with contextlib.suppress(Exception):  # the writer may be creating the file
                reader = StoreReader(self.store, wait_s=5)
                runs = reader.runs()
                if runs:
                    self.run_id = str(runs[0]["id"])
                    done = [r for r in reader.op_seconds(self.run_id, PHASE) if r["ops"] > 0]
                    if len({r["ts"] for r in done}) >= seconds:
                        return self.run_id
            time.sleep(0.5)
        raise AssertionError(f"the run phase had no {seconds} s of load within {timeout:g} s")

    def interrupt(self) -> float:
        """SIGINT to the run's process group, as a terminal's Ctrl-C; the time sent."""
        sent = time.time()
        os.killpg(self.proc.pid, signal.SIGINT)
        return sent

    def wait_exit(self, timeout: float) -> tuple[int | None, float]:
        """(exit status or None when still running after `timeout`, when it ended)."""
        try:
            code = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None, time.time()
        return code, time.time()

    def log(self) -> str:
        self._err.flush()
        return self.err_path.read_text(errors="replace")

    def stop(self) -> None:
        """Whatever happened: the run and every process of it are gone."""
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(timeout=30)
        if self.run_id:
            for pid in run_processes(self.run_id):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        self._out.close()
        self._err.close()


def last_op_done(reader: StoreReader, run_id: str, phase: str = PHASE) -> float:
    """The latest completion time of any op of the phase (op_phase's `last_done`)."""
    _cols, rows = reader.sql(
        f"SELECT max(last_done) FROM op_phase WHERE run_id = '{run_id}' AND phase = '{phase}'")
    return float(rows[0][0])


def last_second(reader: StoreReader, run_id: str, phase: str = PHASE) -> int:
    """The last second with a completed op of the phase, over every agent's lines."""
    _cols, rows = reader.sql(
        f"SELECT max(ts) FROM op_intervals WHERE run_id = '{run_id}' AND phase = '{phase}' "
        "AND ops > 0")
    return int(rows[0][0])


def phase_row(reader: StoreReader, run_id: str, phase: str = PHASE) -> dict[str, Any]:
    return next(p for p in reader.phases(run_id) if p["name"] == phase)


def wait_gone(run_id: str, timeout: float) -> dict[int, str]:
    """The run's processes still there after up to `timeout` seconds (empty: none)."""
    deadline = time.monotonic() + timeout
    while (left := run_processes(run_id)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return left
