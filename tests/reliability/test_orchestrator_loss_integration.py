"""SIGKILL of `loadtower run --headless` on the sandbox (real SSH, real Cassandra): the
store keeps every second up to the kill, the next start marks the run interrupted, and
`loadtower cleanup` finds the load processes left behind and stops them."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from loadtower.agents import secret_dir
from loadtower.store import StoreReader
from tests.reliability.fault_run import inventory_with_processes
from tests.reliability.helpers import cli

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]


def run_processes(run_id: str) -> dict[int, str]:
    """Processes of this machine that belong to the run (by marker or by argument)."""
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


def _seconds(store: Path, run_id: str, phase: str) -> list[int]:
    _, rows = StoreReader(store).sql(
        f"SELECT DISTINCT ts FROM op_seconds WHERE run_id = '{run_id}' AND phase = '{phase}' "
        "ORDER BY ts"
    )
    return [int(r[0]) for r in rows]


def _wait_for_load(proc: subprocess.Popen[str], store: Path, seconds: int) -> str:
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(f"the run ended before it was killed: {proc.stderr.read()}")  # type: ignore[union-attr]
        if store.exists():
            try:
                runs = StoreReader(store, wait_s=5).runs()
                if runs and len(_seconds(store, runs[0]["id"], "ycsb-a")) >= seconds:
                    return str(runs[0]["id"])
            except Exception:  # noqa: BLE001 - the writer may be creating the file
                pass
        time.sleep(0.5)
    pytest.fail("the run phase never reached the store")


def _merged(store: Path, run_id: str) -> bool:
    _cols, rows = StoreReader(store).sql(  # the run id is loadtower's own
        f"SELECT count(*) FROM op_intervals WHERE run_id = '{run_id}' AND agent = 'agent1/*'")
    return bool(rows and rows[0][0])


@pytest.mark.parametrize("processes", [1, 2], ids=["one-worker", "merging-host"])
def test_sigkill_of_the_orchestrator_keeps_the_store_and_cleanup_stops_the_load(
    sandbox: dict, tmp_path: Path, processes: int
) -> None:
    """With 2 processes the agent host merges its workers' seconds (`merge_workers`):
    its lead and follower are left behind alike, and cleanup stops both."""
    inventory = Path(sandbox["dir"]) / "inventory.toml"
    if processes != 1:
        inventory = inventory_with_processes(sandbox, tmp_path / "inventory.toml", processes)
    store = tmp_path / "runs.duckdb"
    argv = [sys.executable, "-m", "loadtower", "run", "quickstart", "--inventory", str(inventory)]
    argv += ["--headless", "--store", str(store), "--set", "dataset.records=2000"]
    argv += ["--set", "phases[1].duration=300s", "--set", "phases[1].rate=300"]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    run_id = ""
    try:
        run_id = _wait_for_load(proc, store, seconds=8)
        before = _seconds(store, run_id, "ycsb-a")
        left = run_processes(run_id)
        workers = [c for c in left.values() if "agent worker" in c and "--index" in c]
        assert len(workers) == processes, left
        if processes > 1:  # the host's seconds are merged: one line each (agent1/*)
            assert _merged(store, run_id), "no merged line of agent1 in the store"
        killed_at = time.time()
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)

        # the store: every second committed before the kill, no gap, up to the last second
        seconds = _seconds(store, run_id, "ycsb-a")
        assert set(before) <= set(seconds)
        assert seconds == list(range(seconds[0], seconds[-1] + 1))
        lag = killed_at - (seconds[-1] + 1)
        print(f"last stored second ended {lag:.2f} s before the SIGKILL")
        assert lag < 6.0  # interval lines reach the store ~1-3 s after their second
        assert StoreReader(store).run(run_id)["status"] == "running"  # nobody looked yet

        # `runs` names it (and writes nothing); `repair` marks it interrupted, with the reason
        done = cli("runs", "--store", store, "--json")
        assert done.returncode == 0, done.stderr
        assert f"run {run_id} is still 'running' but" in done.stderr
        done = cli("repair", "--store", store)
        assert done.returncode == 0, done.stderr
        assert f"run {run_id} marked interrupted" in done.stdout
        done = cli("runs", "--store", store, "--json")
        run = next(r for r in json.loads(done.stdout) if r["id"] == run_id)
        assert run["status"] == "interrupted"
        assert f"pid {proc.pid} on" in run["reason"] and "ended without finishing" in run["reason"]
        assert run["ended"] >= seconds[-1]

        # the load it started is still there; cleanup lists it, then stops it
        left = run_processes(run_id)
        assert any("agent worker" in c for c in left.values()), left
        dry = cli("cleanup", "--inventory", inventory, "--dry-run")
        assert dry.returncode == 0, dry.stdout + dry.stderr
        assert f"run {run_id}  orchestrator (pid {proc.pid} on" in dry.stdout
        assert "would stop" in dry.stdout and "agent worker" in dry.stdout
        # the run's private directory (link key, password) on the agent host stays as long
        # as its workers live; cleanup removes it with them (docs/security.md)
        assert f"the private directory of run {run_id}: left alone" in dry.stdout
        assert secret_dir.run_dir(run_id).is_dir()
        stop = cli("cleanup", "--inventory", inventory, "--run", run_id, "--timeout", "10")
        print(stop.stdout)
        assert stop.returncode == 0, stop.stdout + stop.stderr
        assert "stopped (SIG" in stop.stdout
        assert run_processes(run_id) == {}  # `ps` shows none of the run's processes
        assert f"the private directory of run {run_id}: removed" in stop.stdout
        assert not secret_dir.run_dir(run_id).exists()
        again = cli("cleanup", "--inventory", inventory, "--run", run_id)
        assert again.returncode == 0 and "no loadtower processes" in again.stdout
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
        if run_id:
            for pid in run_processes(run_id):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)

