"""The run's Locust master killed (kill -9) mid-phase, on the sandbox through real SSH.

Before, the orchestrator did not notice: its reader of the master's output just ended,
and the run waited out its phases at 0 ops/s (a one-hour phase: an hour) with no word.
Now the run fails within seconds, says why in one line (an error event, the run's reason,
stderr) and keeps every sample it took, the workers' spooled lines included.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from loadtower.store import StoreReader
from tests.reliability.fault_run import (
    BackgroundRun,
    events,
    per_agent_seconds,
    pids_of,
    wait_gone,
)

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]

DURATION_S = 600  # far longer than the test waits: only a run that noticed ends in time
SCENARIO = f"""
name = "master-loss"
[target]
keyspace = "lt_master_loss"
[dataset]
records = 1000
[workloads.main]
preset = "ycsb-b"
[[phases]]
type = "load"
[[phases]]
type = "run"
name = "steady"
rate = 200
duration = "{DURATION_S}s"
"""


def test_a_killed_master_fails_the_run_at_once_and_keeps_its_samples(
    sandbox: dict, tmp_path: Path
) -> None:
    scenario = tmp_path / "master-loss.toml"
    scenario.write_text(SCENARIO)
    store = tmp_path / "runs.duckdb"
    run = BackgroundRun(scenario, Path(sandbox["dir"]) / "inventory.toml", store, tmp_path)
    try:
        steady = run.wait_for("the steady phase", run.phase_started("steady"), 240)

        def running(reader: StoreReader, run_id: str) -> bool:
            seconds = [ts for agent in per_agent_seconds(reader, run_id).values()
                       for ts in agent if ts > steady["started"]]
            return len(set(seconds)) >= 5

        run.wait_for("5 s of the steady phase stored", running, 90)
        masters = pids_of(f"agent master .*{run.run_id}")
        assert len(masters) == 1, f"the run's Locust master: {masters}"
        os.kill(masters[0], signal.SIGKILL)
        killed_at = time.time()
        # the phase has most of its 600 s left: a run that did not notice is still going
        status = run.finish(180)
        stderr = run.log_tail()
    finally:
        run.stop()
    assert wait_gone(run.run_id, 30) == []  # no agent or worker process of it is left
    assert status == 2, stderr
    assert "the Locust master" in stderr and "SIGKILL" in stderr, stderr

    reader = StoreReader(store)
    row = reader.run(run.run_id)
    assert row["status"] == "failed", row
    assert "the Locust master" in row["reason"] and "killed by SIGKILL" in row["reason"], row
    said = [e["message"] for e in events(reader, run.run_id, "error")]
    assert any("the Locust master" in m for m in said), said
    # the seconds before the kill are kept (live, or read from the workers' spools)
    before = {ts: ops for agent in per_agent_seconds(reader, run.run_id).values()
              for ts, ops in agent.items() if steady["started"] < ts < killed_at - 1}
    assert len(before) >= 5 and all(ops > 0 for ops in before.values()), before
