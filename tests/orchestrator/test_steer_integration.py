"""Steering a headless run on the sandbox with `loadtower control` (issue 31), as an
operator would from another terminal: an open-model phase's rate raised from 500 to
1,000 ops/s, a closed-model phase's users from 2 to 6. The stored seconds follow the
change within 2 s, each change is an event, the Rust core's intended ops of the phase
are all counted (none dropped, none twice), and the phase's result and end line say
that it was steered."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from loadtower.store import StoreReader
from tests.orchestrator.run_helpers import only_run, scenario_argv

pytestmark = [pytest.mark.integration, pytest.mark.alone,  # rates reached after each steer
              pytest.mark.timeout(600)]

SCENARIO = """
name = "steer"
engine = "cassandra"
[target]
keyspace = "lt_test_steer"
replication_factor = 1
consistency = "ONE"
[dataset]
records = 2000
fields = 2
field_size = 50
[workloads.main]
preset = "ycsb-c"
[[phases]]
type = "load"
concurrency = 16
[[phases]]
type = "run"
name = "open"
duration = "14s"
rate = 500
[[phases]]
type = "run"
name = "closed"
duration = "12s"
users = 2
think_time = "20ms"
"""
RUN_TIMEOUT_S = 400.0
STEER_AFTER_S = 5.0  # into the phase: seconds at the first level before the change


def _wait_line(out: Path, proc: subprocess.Popen[str], text: str) -> float:
    """When the run's output first had `text` (it is polled every 0.1 s)."""
    deadline = time.monotonic() + RUN_TIMEOUT_S
    while text not in out.read_text(errors="replace"):
        assert proc.poll() is None, f"the run ended before '{text}': {out.read_text()[-2000:]}"
        assert time.monotonic() < deadline, f"no '{text}' within {RUN_TIMEOUT_S:g} s"
        time.sleep(0.1)
    return time.time()


def _control(store: Path, run_id: str, *command: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "loadtower", "control", run_id, *command, "--store", str(store)]
    return subprocess.run(argv, capture_output=True, text=True, timeout=60)


def _mean(values: list[int]) -> float:
    assert values, "no seconds to compare"
    return sum(values) / len(values)


def test_a_headless_run_is_steered_with_loadtower_control(sandbox: dict, tmp_path: Path) -> None:
    (tmp_path / "steer.toml").write_text(SCENARIO)
    store = tmp_path / "runs.duckdb"
    argv = scenario_argv(tmp_path / "steer.toml", Path(sandbox["inventory"]), store)
    out = tmp_path / "out.log"
    with out.open("w") as sink:
        proc = subprocess.Popen([*argv, "--no-metrics"], stdout=sink, stderr=subprocess.STDOUT,
                                text=True)
        try:
            _wait_line(out, proc, "run_id: ")
            run_id = out.read_text().split("run_id: ", 1)[1].split()[0]
            _wait_line(out, proc, "phase 2/3 open (run) started")
            time.sleep(STEER_AFTER_S)
            wrong = _control(store, run_id, "users", "4")  # the open model takes a rate
            raised = _control(store, run_id, "rate", "1000")
            _wait_line(out, proc, "phase 3/3 closed (run) started")
            time.sleep(STEER_AFTER_S)
            more = _control(store, run_id, "users", "6")
            proc.wait(timeout=RUN_TIMEOUT_S)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait(timeout=60)
    log = out.read_text(errors="replace")
    assert proc.returncode == 0, log[-3000:]
    assert wrong.returncode == 2 and "steer it with 'rate N'" in wrong.stderr, wrong
    assert raised.returncode == 0, raised.stderr
    assert raised.stdout.strip() == "ok: phase open now at 1,000 ops/s"
    assert more.returncode == 0 and more.stdout.strip() == "ok: phase closed now at 6 users"
    late = _control(store, run_id, "rate", "10")  # the run is over: nothing listens
    assert late.returncode == 2 and f"no run {run_id} answers" in late.stderr

    run = only_run(store)
    reader = StoreReader(store)
    events = reader.events(run["id"])
    [rate_change] = [e for e in events if e["kind"] == "rate_change"]
    [users_change] = [e for e in events if e["kind"] == "users_change"]
    change = rate_change["data"]
    assert (rate_change["phase"], change["from"], change["to"]) == ("open", 500.0, 1000.0)
    assert users_change["data"]["to"] == 6.0

    # the open phase's seconds: 500 before the change, 1,000 from 2 s after it
    at = int(rate_change["ts"])
    phases = {p["name"]: p for p in reader.phases(run["id"])}
    first, last = int(phases["open"]["started"]) + 2, int(phases["open"]["ended"]) - 1
    seconds = {r["ts"]: r["ops"] for r in reader.op_seconds(run["id"], "open")}
    before = [seconds.get(t, 0) for t in range(first, at)]
    after = [seconds.get(t, 0) for t in range(at + 2, last)]
    print(f"open: {before} -> {after}")
    assert abs(_mean(before) - 500) <= 50 and abs(_mean(after) - 1000) <= 100, (before, after)

    # the Rust core ran the phase: every intended op counted once, as the store has them
    drains = [e["data"] for e in events
              if e["kind"] == "drain" and e["phase"] == "open"]
    cores = [d["core"] for d in drains if d.get("core")]
    assert cores, drains
    intended = sum(c["intended"] for c in cores)
    counted = sum(c["counted"] for c in cores)
    assert intended == counted + sum(c["abandoned"] for c in cores)
    [summary] = [r for r in reader.phase_summary(run["id"]) if r["phase"] == "open"]
    assert summary["ops"] + summary["errors"] == counted

    # the closed phase: 6 users do more than 2 (each waits 20 ms between its ops)
    at = int(users_change["ts"])
    first, last = int(phases["closed"]["started"]) + 2, int(phases["closed"]["ended"]) - 1
    seconds = {r["ts"]: r["ops"] for r in reader.op_seconds(run["id"], "closed")}
    before = [seconds.get(t, 0) for t in range(first, at)]
    after = [seconds.get(t, 0) for t in range(at + 2, last)]
    print(f"closed: {before} -> {after}")
    assert _mean(after) > 2 * _mean(before), (before, after)

    result = phases["open"]["result"]
    assert [c["to"] for c in result["steered"]] == [1000.0]
    assert "phase open ended" in log and "rate steered live: 500 ops/s -> 1,000 ops/s" in log
