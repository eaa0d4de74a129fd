"""A real redis-server of a test's own: the sandbox service's configuration (its login,
the default user off) in a temporary folder, on a free loopback port; stopped and its
folder removed afterwards, even when the test fails."""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from loadtower.engines.redis.sandbox.service import SERVICE
from loadtower.sandbox import processes as procs

HOST = "127.0.0.1"
USER = SERVICE.username


def needs_redis_server() -> None:
    if not SERVICE.available():
        pytest.skip(SERVICE.missing_reason())


@contextlib.contextmanager
def redis_server() -> Iterator[tuple[str, int, str, procs.ProcessRecord]]:
    """(host, port, password, process) of a redis-server started here."""
    needs_redis_server()
    with tempfile.TemporaryDirectory(prefix="lt-redis-") as folder:
        directory = Path(folder)
        port = procs.free_port([HOST])
        record = procs.spawn(SERVICE.argv(directory, HOST, port), directory / "redis.log")
        try:
            if not procs.wait_until(lambda: SERVICE.ping(HOST, port), 30):
                raise RuntimeError(f"redis-server did not answer on {HOST}:{port}: "
                                   + procs.log_tail(directory / "redis.log"))
            yield HOST, port, SERVICE.password(directory), record
        finally:
            procs.kill(record)
