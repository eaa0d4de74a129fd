"""One cluster sandbox for this package's tests (`loadtower sandbox up --cluster`), as a
user brings it up: `loadtower sandbox up --cluster --dir DIR --json`, and `loadtower
sandbox down --dir DIR` in finally, then the leftover check (no ltc-* namespace, veth or
bridge, no loadtower/* cgroup, no user ltsandbox, no sudo rule, no process naming DIR).

Before it, `crash_then_down`: an `up --cluster` in another directory is SIGKILLed
midway (hosts, sshd and a Cassandra node already started), then `sandbox down` of that
directory runs; what was left is recorded for test_crash_down.py (the names are fixed,
so two clusters cannot exist at once: this runs first, in the same fixture).

Package scope, not session: the cluster is down again once the last test of tests/cluster/
has run, so later tests that make their own ltc-* hosts (tests/sandbox/test_netns_hosts.py)
find the machine free. Run these tests alone: `flock /tmp/lt-cluster.lock timeout 1800 .venv/bin/pytest -m
integration -q tests/cluster/`.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.conftest import loadtower_command, parse_info, run_cli

UP_TIMEOUT_S = 900
DOWN_TIMEOUT_S = 300


def cluster_leftovers(directory: Path) -> list[str]:
    """Everything a cluster sandbox makes, found by name (tests/leftovers.py), plus the
    file naming the directory whose cluster is up and any process naming DIR."""
    from loadtower.sandbox.cluster_layout import OWNER_FILE
    from tests.leftovers import cluster_leftovers as by_name
    from tests.leftovers import mentioning

    left = by_name()
    if OWNER_FILE.exists():
        left.append(f"file {OWNER_FILE}")
    left += [f"process {p.pid}: {' '.join(p.cmdline())[:160]}" for p in mentioning(directory)]
    return left


def wait_leftovers_gone(directory: Path, wait: float = 20.0) -> list[str]:
    deadline = time.monotonic() + wait
    while True:
        left = cluster_leftovers(directory)
        if not left or time.monotonic() >= deadline:
            return left
        time.sleep(0.5)


@dataclass
class CrashResult:
    killed_after: list[str] = field(default_factory=list)  # steps `up` had done
    present_before_down: list[str] = field(default_factory=list)
    down: subprocess.CompletedProcess[str] | None = None
    left_after_down: list[str] = field(default_factory=list)


def _crash_then_down(directory: Path) -> CrashResult:
    """`up --cluster` SIGKILLed once a Cassandra node has been spawned, then `down`."""
    from loadtower.sandbox import cluster_state as cst

    result = CrashResult()
    log = open(directory.parent / f"{directory.name}-up.log", "w")  # noqa: SIM115
    up = subprocess.Popen(
        [*loadtower_command(), "sandbox", "up", "--cluster", "--dir", str(directory)],
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and up.poll() is None:
            state = cst.load(directory)
            if state and any(n.process for n in state.nodes.values()):
                result.killed_after = [s["step"] for s in state.steps]
                break
            time.sleep(0.2)
    finally:
        if up.poll() is None:
            os.kill(up.pid, signal.SIGKILL)
        up.wait(timeout=30)
        log.close()
    result.present_before_down = cluster_leftovers(directory)
    result.down = run_cli(["sandbox", "down", "--dir", str(directory)], timeout=DOWN_TIMEOUT_S)
    result.left_after_down = wait_leftovers_gone(directory)
    return result


@pytest.fixture(scope="package")
def crash_then_down(tmp_path_factory: pytest.TempPathFactory) -> CrashResult:
    directory = tmp_path_factory.mktemp("cluster-crash").resolve()
    try:
        return _crash_then_down(directory)
    finally:
        if cluster_leftovers(directory):  # never leave it for the session's cluster
            run_cli(["sandbox", "down", "--cluster", "--dir", str(directory)], DOWN_TIMEOUT_S)


@pytest.fixture(scope="package")
def cluster(
    tmp_path_factory: pytest.TempPathFactory, crash_then_down: CrashResult
) -> Iterator[dict]:
    directory = tmp_path_factory.mktemp("cluster").resolve()
    up = ["sandbox", "up", "--cluster", "--dir", str(directory), "--timeout", "240", "--json"]
    try:
        yield parse_info(run_cli(up, timeout=UP_TIMEOUT_S))
    finally:
        down = run_cli(["sandbox", "down", "--dir", str(directory)], timeout=DOWN_TIMEOUT_S)
        left = wait_leftovers_gone(directory)
        assert down.returncode == 0, f"`loadtower sandbox down` failed: {down.stderr[-2000:]}"
        assert left == [], f"the cluster sandbox left: {left}"


def ssh(
    cluster: dict, host: str, command: str, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """`command` on a cluster host as ltsandbox, host key checked against known_hosts."""
    address = next(h["mgmt_address"] for h in cluster["hosts"] if h["name"] == host)
    ssh_info = cluster["ssh"]
    argv = [
        "ssh",
        "-i",
        ssh_info["key"],
        "-o",
        f"UserKnownHostsFile={ssh_info['known_hosts']}",
        "-o",
        "StrictHostKeyChecking=yes",
        "-o",
        "BatchMode=yes",
        "-o",
        "ConnectTimeout=10",
        f"ltsandbox@{address}",
        command,
    ]
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout)


@dataclass
class FirstRun:
    """The agent hosts as they were before any run, and the first run (quickstart, which
    bootstraps both agent hosts)."""

    before: dict[str, dict[str, subprocess.CompletedProcess[str]]]
    done: subprocess.CompletedProcess[str]
    store: Path


AGENTS = ("agent1", "agent2")
# The built-ins make SimpleStrategy keyspaces; across two DCs a LOCAL_* consistency
# cannot be met for rows whose replica is in the other DC (docs/cluster-sandbox.md)
BUILTIN_SETS = ("target.consistency=ONE",)
# An address outside 198.18.0.0/15 (TEST-NET-2): the hosts have no route to it, so the
# connect fails at once with ENETUNREACH and no packet is ever sent anywhere.
NO_ROUTE = "198.51.100.1"


@pytest.fixture(scope="package")
def first_run(cluster: dict, tmp_path_factory: pytest.TempPathFactory) -> FirstRun:
    """Every test that runs a scenario uses this first: the agent hosts start with nothing."""
    from tests.orchestrator.run_helpers import run_scenario

    before: dict[str, dict[str, subprocess.CompletedProcess[str]]] = {}
    for host in AGENTS:
        before[host] = {
            "import": ssh(cluster, host, "cd ~ && /usr/bin/python3 -c 'import loadtower'"),
            "route": ssh(
                cluster,
                host,
                '/usr/bin/python3 -c "import socket; s = socket.socket(); s.settimeout(5); '
                f"s.connect(('{NO_ROUTE}', 443))\"",
            ),
            "bootstrap_dir": ssh(cluster, host, f"ls -d ~/loadtower-{host}"),
        }
    store = tmp_path_factory.mktemp("cluster-runs") / "quickstart.duckdb"
    done = run_scenario("quickstart", Path(cluster["dir"]) / "inventory.toml", store, timeout=900)
    return FirstRun(before, done, store)
