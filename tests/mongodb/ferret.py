"""A FerretDB (MongoDB protocol over SQLite) for the mongodb tests: a real server on a
free loopback port, with a user, in a temporary directory; stopped and removed after."""

from __future__ import annotations

import contextlib
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

FALLBACK_BINARY = Path("/tmp/ferretdb-bin/ferretdb")
START_TIMEOUT_S = 30.0
USER, PASSWORD = "bench", "secret-pw"


def ferretdb_binary() -> Path | None:
    """The sandbox's cached FerretDB binary, else the hand-built one, else None."""
    with contextlib.suppress(Exception):
        from loadtower.engines.mongodb.sandbox import ferretdb

        found = ferretdb.binary_path()
        if found is not None and Path(found).is_file():
            return Path(found)
    return FALLBACK_BINARY if FALLBACK_BINARY.is_file() else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_listening(port: int, proc: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"ferretdb exited with {proc.returncode}: {log.read_text()[-2000:]}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1.0):
            return
        time.sleep(0.1)
    raise RuntimeError(f"ferretdb did not listen on 127.0.0.1:{port} within {START_TIMEOUT_S} s")


@contextlib.contextmanager
def ferretdb_server() -> Iterator[tuple[str, int]]:
    """``("127.0.0.1", port)`` of a running FerretDB with user USER / PASSWORD."""
    with ferretdb_process() as (address, _proc):
        yield address


@contextlib.contextmanager
def ferretdb_process() -> Iterator[tuple[tuple[str, int], subprocess.Popen[bytes]]]:
    """The address of a running FerretDB and its process (a test may kill it)."""
    binary = ferretdb_binary()
    if binary is None:
        pytest.skip("no FerretDB binary (loadtower sandbox mongodb start builds one)")
    workdir = Path(tempfile.mkdtemp(prefix="lt-test-ferret-"))
    port = _free_port()
    log = workdir / "ferretdb.log"
    proc = None
    try:
        (workdir / "data").mkdir()
        with log.open("wb") as out:
            proc = subprocess.Popen(
                [
                    str(binary), "--handler=sqlite", f"--sqlite-url=file:{workdir}/data/",
                    f"--listen-addr=127.0.0.1:{port}", "--telemetry=disable", "--debug-addr=-",
                    f"--state-dir={workdir}",
                    "--test-enable-new-auth", "--setup-database=admin",
                    f"--setup-username={USER}", f"--setup-password={PASSWORD}",
                ],
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        _wait_listening(port, proc, log)
        yield ("127.0.0.1", port), proc
    finally:
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait(10)
        shutil.rmtree(workdir, ignore_errors=True)
