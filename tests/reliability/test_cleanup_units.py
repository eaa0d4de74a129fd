"""`loadtower cleanup`'s listing and stopping, on real processes of this machine.

Every process here carries a run id unique to the test, so nothing else on the machine
(other runs, other tests) is ever listed as ours or stopped.
"""

from __future__ import annotations

import os
import secrets
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from loadtower.fleet.cleanup_script import (
    LIST_SCRIPT,
    ORCHESTRATOR_ENV,
    RUN_ENV,
    Found,
    MachineId,
    decide,
    marker_env,
    parse_listing,
    parse_stop,
    stop_script,
)
from loadtower.protocol.process_identity import ProcessId, boot_id, start_ticks, this_process
from tests.reliability.helpers import cli, closed_port, write_inventory

IGNORES_TERM = (
    "import signal, sys, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
    "print('ready', flush=True); time.sleep(600)"
)


def _gone_orchestrator() -> ProcessId:
    child = subprocess.Popen(["true"])
    child.wait(timeout=30)
    return ProcessId(socket.gethostname(), child.pid, 1, boot_id())  # start 1: never reused


@pytest.fixture
def spawn() -> Iterator:
    procs: list[subprocess.Popen[str]] = []

    def start(run_id: str, orchestrator: ProcessId | None, ignore_term: bool = False):
        env = {**os.environ, RUN_ENV: run_id}
        if orchestrator is not None:
            env[ORCHESTRATOR_ENV] = orchestrator.encode()
        argv = [sys.executable, "-c", IGNORES_TERM] if ignore_term else ["sleep", "600"]
        proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, text=True)
        procs.append(proc)
        if ignore_term:
            assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        return proc

    yield start
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
        proc.wait(timeout=30)


def _list(run_id: str) -> tuple[MachineId | None, dict[int, Found]]:
    out = subprocess.run(["sh", "-c", LIST_SCRIPT], capture_output=True, text=True, timeout=60)
    machine, found = parse_listing(out.stdout)
    return machine, {p.pid: p for p in found if p.run_id == run_id}


def test_lists_marked_processes_and_stops_only_those_of_gone_orchestrators(spawn) -> None:
    run_id = "test-" + secrets.token_hex(4)
    gone = spawn(run_id, _gone_orchestrator())
    stubborn = spawn(run_id, _gone_orchestrator(), ignore_term=True)
    live = spawn(run_id, this_process())  # this test is the orchestrator: alive
    foreign = spawn(run_id, ProcessId("elsewhere.example", 4242, 17, "other-boot"))
    unmarked = spawn(run_id, None)
    machine, found = _list(run_id)
    assert machine is not None and machine.boot == boot_id()
    assert machine.hostname == socket.gethostname() and machine.pid_namespace
    assert set(found) == {gone.pid, stubborn.pid, live.pid, foreign.pid, unmarked.pid}
    assert found[gone.pid].start == start_ticks(gone.pid)
    assert "sleep 600" in found[gone.pid].command
    stop = {pid for pid, proc in found.items() if decide(proc, machine, stop_all=False)}
    assert stop == {gone.pid, stubborn.pid}
    assert {pid: p.state for pid, p in found.items()} == {
        gone.pid: "dead",
        stubborn.pid: "dead",
        live.pid: "alive",
        foreign.pid: "unknown",
        unmarked.pid: "unknown",
    }
    targets = [(pid, found[pid].start) for pid in sorted(stop)]
    done = subprocess.run(
        ["sh", "-c", stop_script(targets, timeout_s=1.0)], capture_output=True, text=True,
        timeout=60,
    )  # fmt: skip
    assert parse_stop(done.stdout) == {gone.pid: "terminated", stubborn.pid: "killed"}
    assert gone.wait(timeout=10) == -signal.SIGTERM
    assert stubborn.wait(timeout=10) == -signal.SIGKILL
    assert live.poll() is None and foreign.poll() is None and unmarked.poll() is None
    _, after = _list(run_id)
    assert set(after) == {live.pid, foreign.pid, unmarked.pid}
    assert all(decide(p, machine, stop_all=True) for p in after.values())  # --all


def test_a_pid_that_names_another_process_now_is_never_signalled(spawn) -> None:
    run_id = "test-" + secrets.token_hex(4)
    proc = spawn(run_id, _gone_orchestrator())
    start = start_ticks(proc.pid)
    assert start is not None
    script = stop_script([(proc.pid, start + 1)], timeout_s=0.4)
    done = subprocess.run(["sh", "-c", script], capture_output=True, text=True, timeout=60)
    assert parse_stop(done.stdout) == {proc.pid: "gone"}
    assert proc.poll() is None


def test_the_marker_names_the_run_and_this_orchestrator() -> None:
    env = marker_env("20261123-000000-abcd")
    assert env[RUN_ENV] == "20261123-000000-abcd"
    assert ProcessId.decode(env[ORCHESTRATOR_ENV]) == this_process()


def test_cleanup_command_checks_this_machine_and_names_unreachable_hosts(
    spawn, tmp_path: Path
) -> None:
    run_id = "test-" + secrets.token_hex(4)
    leftover = spawn(run_id, _gone_orchestrator())
    inventory = write_inventory(tmp_path / "inv.toml", closed_port())
    dry = cli("cleanup", "--inventory", inventory, "--run", run_id, "--dry-run")
    assert dry.returncode == 2, dry.stdout + dry.stderr  # db1 and agent1 were not checked
    assert "Traceback" not in dry.stdout + dry.stderr
    assert "db1, agent1 (127.0.0.1:" in dry.stdout and "NOT CHECKED" in dry.stdout
    assert f"pid {leftover.pid}  run {run_id}" in dry.stdout and "would stop" in dry.stdout
    assert leftover.poll() is None
    done = cli("cleanup", "--inventory", inventory, "--run", run_id, "--timeout", "2")
    assert done.returncode == 2
    assert "stopped (SIGTERM)" in done.stdout, done.stdout
    assert leftover.wait(timeout=10) == -signal.SIGTERM
    again = cli("cleanup", "--inventory", inventory, "--run", run_id, "--dry-run")
    assert "this machine: no loadtower processes" in again.stdout, again.stdout


def test_an_orchestrator_that_ran_on_the_listed_host_is_checked_there() -> None:
    there = MachineId("boot-b", "pid:[1]", "agent-host")
    orch = ProcessId("agent-host", 77, 1234, "boot-b")

    def state(start_there: int | None, machine: MachineId) -> str:
        proc = Found(1, 1, "r", orch, start_there, "python -m loadtower agent worker")
        decide(proc, machine, stop_all=False)
        return proc.state

    assert state(1234, there) == "alive"
    assert state(None, there) == "dead"  # no such pid there
    assert state(99, there) == "dead"  # the pid names another process now
    assert state(1234, MachineId("boot-c", "pid:[1]", "agent-host")) == "unknown"  # rebooted?
    assert state(1234, MachineId("boot-b", "pid:[2]", "container")) == "unknown"


def test_endpoints_are_merged_only_when_they_reach_one_machine() -> None:
    from loadtower.fleet.cleanup_hosts import Machine, _merge

    async def never(script: str, timeout: float) -> tuple[int, str, str]:
        raise AssertionError("not called")

    def machine(label: str, boot: str | None, ns: str) -> Machine:
        return Machine([label], never, MachineId(boot, ns, label))

    merged = _merge([machine("db1", "b", "pid:[1]"), machine("c1", "b", "pid:[2]"),
                     machine("here", "b", "pid:[1]"), machine("odd", None, "")])  # fmt: skip
    assert [m.labels for m in merged] == [["db1", "here"], ["c1"], ["odd"]]
