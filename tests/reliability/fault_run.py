"""Helpers of the fault tests: a second agent in the sandbox inventory, a run in the
background that the test can hurt, and the store read while (and after) it runs."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from loadtower.store import StoreReader


def steady_scenario(path: Path, name: str, rate: int, seconds: int) -> Path:
    """`path`: a scenario NAME on keyspace lt_NAME: a load of 2,000 YCSB-B records, then
    the open-model run phase "steady" of `rate` ops/s for `seconds`."""
    keyspace = "lt_" + name.replace("-", "_")
    path.write_text(
        f"""
name = "{name}"
[target]
keyspace = "{keyspace}"
[dataset]
records = 2000
[workloads.main]
preset = "ycsb-b"
[[phases]]
type = "load"
[[phases]]
type = "run"
name = "steady"
rate = {rate}
duration = "{seconds}s"
"""
    )
    return path


def inventory_with_processes(sandbox: dict, out: Path, processes: int) -> Path:
    """The sandbox inventory with `processes` worker processes on agent1 (more than one:
    the host merges their seconds, `merge_workers` being true by default)."""
    text = (Path(sandbox["dir"]) / "inventory.toml").read_text()
    agent1 = text.index("[hosts.agent1]")
    head, tail = text[:agent1], text[agent1:]
    assert "\nprocesses = 1\n" in tail
    out.write_text(head + tail.replace("\nprocesses = 1\n", f"\nprocesses = {processes}\n", 1))
    return out


def inventory_with_agent2(
    sandbox: dict,
    out: Path,
    *,
    ssh_port: int | None = None,
    grace: str | None = None,
    processes: int = 1,
) -> Path:
    """The sandbox inventory plus host agent2 (one worker process). With ``ssh_port``
    agent2 is reached through that port (a relay in front of sshd) and has its own SSH
    connection; the known_hosts copy then names the sandbox host key for it too."""
    base = Path(sandbox["dir"])
    text = (base / "inventory.toml").read_text()
    ssh = sandbox["ssh"]
    known = Path(ssh["known_hosts"]).read_text()
    if ssh_port is not None:
        key = known.split(None, 1)[1]
        known += f"[127.0.0.1]:{ssh_port} {key}"
    known_path = out.parent / "known_hosts"
    known_path.write_text(known)
    text = text.replace(f'known_hosts = "{ssh["known_hosts"]}"', f'known_hosts = "{known_path}"')
    if grace is not None:
        text = text.replace("[ssh]\n", f'[ssh]\nagent_grace = "{grace}"\n', 1)
    agent1 = text[text.index("[hosts.agent1]") :]
    python = next(line for line in agent1.splitlines() if line.startswith("python = "))
    text += "\n".join(
        [
            "",
            "[hosts.agent2]",
            'address = "127.0.0.1"',
            'roles = ["agent"]',
            python,
            f"processes = {processes}",
            *([f"ssh_port = {ssh_port}"] if ssh_port is not None else []),
            "",
        ]
    )
    out.write_text(text)
    return out


class BackgroundRun:
    """`loadtower run ... --headless` as a child process in its own session."""

    def __init__(self, scenario: Path, inventory: Path, store: Path, log_dir: Path) -> None:
        self.store = store
        self.stdout = open(log_dir / "run.stdout", "w")  # noqa: SIM115
        self.stderr = open(log_dir / "run.stderr", "w")  # noqa: SIM115
        argv = [sys.executable, "-m", "loadtower", "run", str(scenario), "--inventory"]
        argv += [str(inventory), "--headless", "--store", str(store)]
        self.proc = subprocess.Popen(
            argv, stdout=self.stdout, stderr=self.stderr, start_new_session=True
        )
        self.run_id = ""

    def wait_for(self, what: str, check: Any, timeout: float) -> Any:
        """Poll `check(reader, run_id)` until it returns something truthy."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"the run ended ({self.proc.returncode}) before {what}: "
                                     + self.log_tail())
            if self.store.exists():
                reader = StoreReader(self.store)
                if not self.run_id:
                    runs = reader.runs()
                    self.run_id = runs[0]["id"] if runs else ""
                if self.run_id:
                    found = check(reader, self.run_id)
                    if found:
                        return found
            time.sleep(0.5)
        raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")

    def phase_started(self, name: str) -> Any:
        def check(reader: StoreReader, run_id: str) -> Any:
            return next((p for p in reader.phases(run_id) if p["name"] == name), None)

        return check

    def finish(self, timeout: float) -> int:
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"the run did not end within {timeout:g} s") from None

    def log_tail(self) -> str:
        self.stderr.flush()
        return Path(self.stderr.name).read_text()[-2000:]

    def stop(self) -> None:
        """Whatever happened: the run and every process it started here are stopped."""
        if self.proc.poll() is None:
            with _quiet():
                os.killpg(self.proc.pid, signal.SIGINT)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                with _quiet():
                    os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=30)
        if self.run_id:
            kill_marked(self.run_id)
        self.stdout.close()
        self.stderr.close()


def wait_steady_seconds(run: BackgroundRun, agent: str, seconds: int = 8) -> dict:
    """The "steady" phase's row, once `agent` (HOST/INDEX, or HOST/* for a host's merged
    lines) has `seconds` seconds of it in the store."""
    steady = run.wait_for("the steady phase", run.phase_started("steady"), 240)

    def running(reader: StoreReader, run_id: str) -> bool:
        stored = per_agent_seconds(reader, run_id).get(agent, {})
        return sum(1 for ts in stored if ts > steady["started"]) >= seconds

    run.wait_for(f"{seconds} s of {agent} in the steady phase", running, 60)
    return steady


class _quiet:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> bool:
        return exc[0] is not None and issubclass(exc[0], ProcessLookupError)  # type: ignore[arg-type]


def pids_of(pattern: str) -> list[int]:
    out = subprocess.run(["pgrep", "-f", "--", pattern], capture_output=True, text=True, timeout=10)
    return [int(p) for p in out.stdout.split() if int(p) != os.getpid()]


def kill_marked(run_id: str) -> None:
    """Processes whose command line names this run (the run id is unique)."""
    for pid in pids_of(run_id):
        with _quiet():
            os.kill(pid, signal.SIGKILL)


def wait_gone(pattern: str, timeout: float) -> list[int]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        left = pids_of(pattern)
        if not left:
            return []
        time.sleep(0.25)
    return pids_of(pattern)


def per_agent_seconds(reader: StoreReader, run_id: str) -> dict[str, dict[int, int]]:
    """agent -> {second: ops} from the stored per-agent intervals (op_intervals)."""
    _cols, rows = reader.sql(
        "SELECT agent, ts, sum(ops) FROM op_intervals "
        f"WHERE run_id = '{run_id}' GROUP BY agent, ts"
    )
    seconds: dict[str, dict[int, int]] = {}
    for agent, ts, ops in rows:
        seconds.setdefault(str(agent), {})[int(ts)] = int(ops)
    return seconds


def total_ops(reader: StoreReader, run_id: str, t0: int, t1: int) -> int:
    """Ops of every agent in the seconds [t0, t1] (op_seconds, merged across agents)."""
    return sum(r["ops"] for r in reader.op_seconds(run_id) if t0 <= r["ts"] <= t1)


def events(reader: StoreReader, run_id: str, kind: str) -> list[dict]:
    return [e for e in reader.events(run_id) if e["kind"] == kind]
