"""Ctrl-C stops `loadtower sql` at once (one line, exit 130), and a writer that finds the
store held names who holds it. A real `loadtower sql` subprocess, a real SIGINT."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from loadtower.errors import LoadtowerError
from loadtower.store import StoreWriter
from loadtower.store.connection import connect
from loadtower.store.lock_holder import describe_holder, holder_pid
from tests.store.holders import holding

# the query once seen running for 599 s and 8.4 GB, deaf to Ctrl-C
ENDLESS = "SELECT count(*) FROM range(1000000000) a, range(10000) b"
WAIT_S = 60.0  # bounded waits: far longer than any of them needs


@pytest.fixture
def store(tmp_path: Path) -> Path:
    path = tmp_path / "s.duckdb"
    with StoreWriter(path) as writer:
        writer.start_run("r", "scn", "", "", {}, {}, {})
    return path


def _waiting(pid: int) -> bool:
    """The main thread sleeps on a futex: the command waits for its query thread."""
    try:
        return "futex" in Path(f"/proc/{pid}/wchan").read_text()
    except OSError:
        return False


def _locked_by(path: Path) -> str | None:
    """The lock error a writer gets right now, or None when it can open the store."""
    try:
        with connect(path, read_only=False, wait_s=0):
            return None
    except LoadtowerError as exc:
        return str(exc)


def test_ctrl_c_stops_a_query_and_the_lock_names_the_query(store: Path) -> None:
    cmd = [sys.executable, "-m", "loadtower", "sql", "--store", str(store), ENDLESS]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + WAIT_S
        message = None
        while message is None and time.monotonic() < deadline and proc.poll() is None:
            # the query holds the store once it runs (the start's recovery step only briefly)
            message = _locked_by(store) if _waiting(proc.pid) else None
            time.sleep(0.05)
        assert message is not None, "the query never held the store"
        assert f"by pid {proc.pid} (" in message and f"sql --store {store}" in message, message
        assert proc.poll() is None  # still running: only Ctrl-C ends it
        sent = time.monotonic()
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=WAIT_S)
        took = time.monotonic() - sent
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate(timeout=WAIT_S)
    assert proc.returncode == 130, (proc.returncode, err)
    assert err.strip() == "loadtower sql: interrupted", err
    assert out == ""
    print(f"Ctrl-C to exit: {took:.3f} s")
    assert _locked_by(store) is None  # the store is free again


def test_lock_error_text_names_the_holding_process(tmp_path: Path) -> None:
    import duckdb

    path = tmp_path / "s.duckdb"
    duckdb.connect(str(path)).close()
    with holding(path) as holder:
        try:
            duckdb.connect(str(path))
        except duckdb.Error as exc:
            text = str(exc)
        else:
            raise AssertionError("the store was not locked")
        assert holder_pid(text) == holder.pid
        shown = describe_holder(text)
        assert shown.startswith(f"pid {holder.pid} (") and "lock-holder-for-test" in shown
    assert describe_holder("Could not set lock on file") == "another process"
    gone = describe_holder("Conflicting lock is held in /usr/bin/python3 (PID 999999999)")
    assert gone == "pid 999999999 (not on this machine, or gone since)"
