"""Ctrl-C without a database: the exit status a signal gives, what a second Ctrl-C leaves
in the store (a real store file), the Locust master ignoring a terminal's SIGINT (a real
master process), and a real `loadtower run` stopped by SIGINT while it connects to a host
that never answers (the sandbox tests: test_interrupt_integration.py)."""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from loadtower.orchestrator.benchmark import Orchestrator, RunOptions
from loadtower.orchestrator.headless_session import SignalCount
from loadtower.orchestrator.sinks import Sinks
from loadtower.orchestrator.standalone_load import free_port
from loadtower.protocol.link_secrets import KEY_ENV
from loadtower.scenarios.plan import load_plan
from loadtower.store import StoreReader, StoreWriter
from tests.reliability.helpers import write_inventory
from tests.store.synth import make_lines

WAIT_S = 60.0  # a bound on waiting for a process, not a measured time


def test_the_exit_status_is_128_plus_the_first_signal() -> None:
    count = SignalCount()
    assert count.count == 0 and count.exit_code() == 3  # no signal: the TUI's stop
    assert count.first(signal.SIGINT) and not count.first(signal.SIGINT)
    assert count.exit_code() == 130 and count.names() == "SIGINT, then SIGINT"
    term = SignalCount()
    term.first(signal.SIGTERM)
    assert term.exit_code() == 143 and term.names() == "SIGTERM"


@pytest.fixture
def orchestrator(tmp_path: Path) -> Iterator[tuple[Orchestrator, StoreWriter, str]]:
    """An orchestrator as a second Ctrl-C finds it: a run and its run phase under way in
    a real store, 20 s of samples handed to the writer."""
    plan = load_plan("quickstart", write_inventory(tmp_path / "inv.toml", free_port()))
    store = tmp_path / "s.duckdb"
    writer = StoreWriter(store, flush_every_s=3600.0)  # only the flushes the test makes
    run_id = writer.start_run("q", "quickstart", "", "", {}, {}, {})
    orch = Orchestrator(plan, RunOptions(store=store))
    orch.sinks, orch.state.run_id, orch.state.status = Sinks(writer, run_id, plan), run_id, "running"
    lines, _raw = make_lines(seconds=20, agents=2, ops=("read",), phase="ycsb-a")
    writer.phase_started(run_id, 1, "ycsb-a", "run", float(lines[0]["ts"]), {})
    orch.open_phase = 1
    for line in lines[:10]:
        writer.add_interval(run_id, line)
    writer.flush()
    for line in lines[10:]:  # handed over, not yet written when the signal comes
        writer.add_interval(run_id, line)
    try:
        yield orch, writer, run_id
    finally:
        writer._stop.set()


def test_a_second_ctrl_c_ends_the_run_and_its_phase_and_keeps_every_sample(
    orchestrator: tuple[Orchestrator, StoreWriter, str],
) -> None:
    orch, writer, run_id = orchestrator
    line = orch.abandon("interrupted by SIGINT, then SIGINT")
    assert line.startswith(f"run {run_id} marked interrupted; every sample received so far")
    reader = StoreReader(writer.path)
    run = reader.run(run_id)
    assert (run["status"], run["reason"]) == ("interrupted", "interrupted by SIGINT, then SIGINT")
    assert run["ended"] is not None
    [phase] = reader.phases(run_id)
    assert phase["ended"] is not None
    assert phase["result"] == {"interrupted": "interrupted by SIGINT, then SIGINT"}
    assert len({r["ts"] for r in reader.op_seconds(run_id, "ycsb-a")}) == 20  # all 20 s
    assert any("ended: interrupted" in e["message"] for e in reader.events(run_id))
    assert orch.state.status == "interrupted" and orch.open_phase is None


def test_a_second_ctrl_c_says_what_is_lost_when_the_store_cannot_be_written_in_time(
    orchestrator: tuple[Orchestrator, StoreWriter, str],
) -> None:
    orch, writer, run_id = orchestrator
    from loadtower.store.connection import open_connection  # knocks: the writer lets go

    holder = open_connection(writer.path, read_only=True)  # the writer cannot commit
    try:
        line = orch.abandon("interrupted by SIGINT, then SIGINT", flush_s=0.2)
    finally:
        holder.close()
    assert line.startswith(f"run {run_id}: the store's last write did not finish within 0.2 s")
    assert "next loadtower command marks the run interrupted" in line


def test_the_locust_master_ignores_a_terminals_sigint_and_obeys_its_orchestrator() -> None:
    """Ctrl-C at a terminal reaches the whole process group: the master must not die or
    hang on it (the orchestrator stops the load through it)."""
    argv = [sys.executable, "-m", "loadtower", "agent", "master", "--bind",
            f"127.0.0.1:{free_port()}", "--expect-workers", "1"]
    env = {**os.environ, KEY_ENV: secrets.token_hex(16)}  # the run's link key
    master = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, start_new_session=True, env=env)
    try:
        assert master.stdin is not None and master.stdout is not None
        for _ in range(2):  # serving (a first stop answered), then after a SIGINT
            master.stdin.write(json.dumps({"cmd": "stop", "drain_s": 1.0}) + "\n")
            master.stdin.flush()
            reply = _line_of_type(master.stdout, "stopped")
            assert reply is not None and master.poll() is None, master.stderr.read()  # type: ignore[union-attr]
            os.killpg(master.pid, signal.SIGINT)
        master.stdin.write(json.dumps({"cmd": "quit"}) + "\n")
        master.stdin.flush()
        assert master.wait(timeout=WAIT_S) == 0
    finally:
        if master.poll() is None:
            os.killpg(master.pid, signal.SIGKILL)
            master.wait(timeout=WAIT_S)


def _line_of_type(stream: object, kind: str) -> dict | None:
    """The first JSON line of `kind` on the master's stdout (None at its end)."""
    for raw in stream:  # type: ignore[attr-defined]
        with contextlib.suppress(ValueError):
            line = json.loads(raw)
            if line.get("type") == kind:
                return dict(line)
    return None


@contextlib.contextmanager
def silent_ssh_host() -> Iterator[tuple[int, threading.Event]]:
    """A TCP port that accepts connections and never says a word (an SSH host that
    hangs); the event is set once a connection came."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.settimeout(0.2)
    came, stop = threading.Event(), threading.Event()
    held: list[socket.socket] = []

    def accept() -> None:
        while not stop.is_set():
            with contextlib.suppress(OSError):
                held.append(server.accept()[0])
                came.set()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1], came
    finally:
        stop.set()
        thread.join(timeout=5)
        for conn in held:
            conn.close()
        server.close()


def test_ctrl_c_while_connecting_ends_the_run_interrupted_with_130(tmp_path: Path) -> None:
    """A stop while the run sets up (here: an SSH host that never answers, with a long
    connect timeout) ends it at once: the run's setup does not wait for its timeouts."""
    with silent_ssh_host() as (port, came):
        inventory = write_inventory(tmp_path / "inv.toml", port)
        text = inventory.read_text().replace("connect_timeout = 5", "connect_timeout = 600")
        inventory.write_text(text)
        store = tmp_path / "s.duckdb"
        argv = [sys.executable, "-m", "loadtower", "run", "quickstart", "--inventory",
                str(inventory), "--headless", "--store", str(store), "--accept-new-host-keys"]
        run = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               stdin=subprocess.DEVNULL, start_new_session=True)
        try:
            assert came.wait(WAIT_S), "the run never connected"
            os.killpg(run.pid, signal.SIGINT)
            out, err = run.communicate(timeout=WAIT_S)
        finally:
            if run.poll() is None:
                os.killpg(run.pid, signal.SIGKILL)
                run.wait(timeout=WAIT_S)
    assert run.returncode == 130, err
    assert "Traceback" not in err
    assert any(line.endswith("interrupted: interrupted by SIGINT") for line in err.splitlines())
    [record] = StoreReader(store).runs()
    assert (record["status"], record["reason"]) == ("interrupted", "interrupted by SIGINT")
