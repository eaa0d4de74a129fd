"""Shared helpers of the reliability tests: running the CLI, checking its error output."""

from __future__ import annotations

import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.orchestrator.run_helpers import run_argv


def cli(*args: str | Path, timeout: float = 120, **kw: object) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "loadtower", *map(str, args)]
    if not kw:  # one that overstays says where it waited
        return run_argv(argv, timeout)
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, **kw)  # type: ignore[call-overload]


def one_error_line(done: subprocess.CompletedProcess[str], command: str = "run") -> str:
    """The single stderr line of a failed command; fails on a traceback or more lines."""
    assert "Traceback" not in done.stderr + done.stdout, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1, done.stderr
    assert lines[0].startswith(f"loadtower {command}: "), lines[0]
    return lines[0]


def closed_port() -> int:
    """A loopback TCP port nobody listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def write_inventory(path: Path, ssh_port: int, extra: str = "") -> Path:
    """A minimal inventory reaching 127.0.0.1 over SSH on `ssh_port`."""
    path.write_text(
        f"""[ssh]
user = "nobody"
port = {ssh_port}
known_hosts = "{path.parent / 'known_hosts'}"
connect_timeout = 5

[cassandra]
username = "loadtower"
password = "inline-secret-1234"
{extra}
[hosts.db1]
address = "127.0.0.1"
roles = ["db"]
engine = "cassandra"

[hosts.agent1]
address = "127.0.0.1"
roles = ["agent"]
"""
    )
    return path


@contextmanager
def tmpfs(where: Path, options: str) -> Iterator[Path]:
    """A tmpfs mounted at `where` (skips the test where mounting is not permitted)."""
    where.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(where)],
                          capture_output=True, text=True, timeout=30)  # fmt: skip
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True, timeout=30)


def fill(disk: Path) -> Path:
    """Write a file until the file system at `disk` is full; returns it (delete to free)."""
    filler = disk / "filler"
    with open(filler, "wb") as handle:
        try:
            while True:
                handle.write(b"\0" * 65536)
                handle.flush()
        except OSError:
            pass
    return filler
