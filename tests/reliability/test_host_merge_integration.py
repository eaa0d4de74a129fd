"""An agent host whose three worker processes merge their seconds (`merge_workers`,
agents/host_lines.py), through real SSH on the sandbox, with the lead (worker 0) killed
(kill -9) mid-phase.

Before the kill the host's seconds are stored as one line each (agent ``agent1/*``);
after it, the two followers send their own lines. Nothing is counted twice and nothing
is lost: the ops the store holds for the phase are the ops the phase intended, minus
what the killed worker had in flight, and the run completes.
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
    inventory_with_processes,
    per_agent_seconds,
    pids_of,
    steady_scenario,
    wait_gone,
    wait_steady_seconds,
)

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]

RATE = 300
SECONDS = 24


def test_a_merged_hosts_lines_are_counted_once_when_its_lead_is_killed(
    sandbox: dict, tmp_path: Path
) -> None:
    scenario = steady_scenario(tmp_path / "host-merge.toml", "host-merge", RATE, SECONDS)
    inventory = inventory_with_processes(sandbox, tmp_path / "inventory.toml", 3)
    store = tmp_path / "runs.duckdb"
    run = BackgroundRun(scenario, inventory, store, tmp_path)
    try:
        wait_steady_seconds(run, "agent1/*")
        victims = pids_of(f"--host-name agent1 --index 0 .*{run.run_id}")
        assert len(victims) == 1, f"agent1's lead worker: {victims}"
        os.kill(victims[0], signal.SIGKILL)
        killed_at = time.time()
        assert run.finish(240) == 0, run.log_tail()
    finally:
        run.stop()

    reader = StoreReader(store)
    assert reader.run(run.run_id)["status"] == "completed", reader.run(run.run_id)["reason"]
    seconds = per_agent_seconds(reader, run.run_id)
    merged = seconds.get("agent1/*", {})
    before = [ts for ts in merged if ts < killed_at - 1]
    assert len(before) >= 8, seconds.keys()  # the host's lines while its lead lived
    # after the kill the followers send their own lines (the lead's own seconds end)
    after = {agent: [ts for ts in s if ts > killed_at + 2] for agent, s in seconds.items()}
    assert after.get("agent1/1") and after.get("agent1/2"), {a: len(t) for a, t in after.items()}
    assert not after.get("agent1/0")
    lost = events(reader, run.run_id, "agent_lost")
    assert [e for e in lost if "agent1/0" in e["message"]], lost

    # every op the store holds is counted once: the phase's ops are those the three,
    # then two, workers sent (the open model's 300/s over the phase), never more
    def total(table: str) -> int:  # the run id is the run's own, made by loadtower
        _cols, rows = reader.sql(f"SELECT sum(ops) FROM {table} "
                                 f"WHERE run_id = '{run.run_id}' AND phase = 'steady'")
        return int(rows[0][0])

    stored, summary = total("op_intervals"), total("op_phase")
    print(f"stored {stored} ops of the steady phase; op_phase {summary}; "
          f"merged seconds {len(merged)}")
    assert summary == stored
    assert stored <= RATE * SECONDS
    assert stored >= 0.85 * RATE * SECONDS  # the killed worker's share until the re-split
    assert wait_gone(f"agent worker .*{run.run_id}", 30) == []
