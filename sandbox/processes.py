"""Start, find and stop the sandbox's detached service processes.

Every service runs in its own session (process group), with stdin closed and its
output in a log file, so it outlives the command (or SSH session) that started it.
A process is identified by its pid AND its start time from /proc, so a recycled pid
is never mistaken for one of ours.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from loadtower.errors import LoadtowerError


@dataclass
class ProcessRecord:
    pid: int
    start_time: int
    log: str
    argv0: str

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict | None) -> ProcessRecord | None:
        return cls(**data) if data else None


def proc_start_time(pid: int) -> int | None:
    """The process start time (clock ticks after boot), or None when it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()
    if fields[0] == "Z":  # zombie: exited, only waiting to be reaped
        return None
    return int(fields[19])


def is_alive(record: ProcessRecord | None) -> bool:
    return record is not None and proc_start_time(record.pid) == record.start_time


def spawn(
    argv: Sequence[str], log: Path, cwd: Path | None = None, env: dict[str, str] | None = None
) -> ProcessRecord:
    """Start ``argv`` detached, output appended to ``log``."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "ab") as out:
        try:
            proc = subprocess.Popen(
                list(argv),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                cwd=cwd,
                env=env,
                start_new_session=True,
                close_fds=True,
            )
        except OSError as exc:
            raise LoadtowerError(f"cannot start {argv[0]}: {exc}") from exc
    start = proc_start_time(proc.pid)
    if start is None:
        proc.wait(timeout=5)
        raise LoadtowerError(f"{argv[0]} exited at once; see {log}")
    return ProcessRecord(proc.pid, start, str(log), str(argv[0]))


def send(record: ProcessRecord | None, sig: int) -> bool:
    if not is_alive(record):
        return False
    assert record is not None
    try:
        os.killpg(record.pid, sig)
    except ProcessLookupError:
        return False
    except PermissionError:
        os.kill(record.pid, sig)
    return True


def stop(record: ProcessRecord | None, timeout: float = 30.0) -> None:
    """SIGCONT (a paused process cannot exit), SIGTERM, then SIGKILL after ``timeout``."""
    if not is_alive(record):
        return
    send(record, signal.SIGCONT)
    send(record, signal.SIGTERM)
    if wait_until(lambda: not is_alive(record), timeout):
        return
    send(record, signal.SIGKILL)
    wait_until(lambda: not is_alive(record), 10.0)


def kill(record: ProcessRecord | None, timeout: float = 15.0) -> None:
    """SIGKILL, then wait (at most ``timeout``) until the process is gone."""
    send(record, signal.SIGKILL)
    wait_until(lambda: not is_alive(record), timeout)


def wait_until(check: Callable[[], bool], timeout: float, interval: float = 0.2) -> bool:
    deadline = time.monotonic() + timeout
    while True:
        if check():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(interval)


def port_answers(host: str, port: int, timeout: float = 1.0) -> bool:
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return True
    except OSError:
        return False


def port_free(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


def free_port(
    hosts: Sequence[str] = ("127.0.0.1",),
    preferred: int | None = None,
    taken: set[int] | None = None,
) -> int:
    """A TCP port free on every one of ``hosts`` (``preferred`` when it is)."""
    taken = taken or set()
    if preferred and preferred not in taken and all(port_free(h, preferred) for h in hosts):
        return preferred
    for _ in range(200):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            sock.bind((hosts[0], 0))
            port = sock.getsockname()[1]
        if port not in taken and all(port_free(h, port) for h in hosts):
            return port
    raise LoadtowerError(f"no free TCP port on {', '.join(hosts)}")


def log_tail(path: str | Path, lines: int = 15) -> str:
    try:
        text = Path(path).read_text(errors="replace").splitlines()
    except OSError:
        return ""
    return "\n".join(text[-lines:])


def wait_ready(
    what: str, record: ProcessRecord | None, check: Callable[[], bool], timeout: float
) -> None:
    """Wait until ``check()`` is true for a process the sandbox started; one clear
    LoadtowerError when it exits first (with its log's last lines) or at ``timeout``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        if not is_alive(record):
            log = record.log if record else ""
            raise LoadtowerError(
                f"{what} exited during start-up; last lines of {log}:\n{log_tail(log)}"
            )
        time.sleep(0.3)
    where = f"; see {record.log}" if record else ""
    raise LoadtowerError(f"{what} did not answer within {timeout:.0f}s{where}")
