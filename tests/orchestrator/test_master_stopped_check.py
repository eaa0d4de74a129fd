"""The master's check after every message (locust_master.fleet_stopped, used by the
guarded runner's `check_stopped`) decides as Locust's own MasterRunner.check_stopped for
every mix of the master's and the workers' states: it only walks the workers without
copying their ids first."""

from __future__ import annotations

import itertools
from types import SimpleNamespace

import locust.runners as lr
import pytest

from loadtower.orchestrator.locust_master import fleet_stopped

STATES = [lr.STATE_INIT, lr.STATE_SPAWNING, lr.STATE_RUNNING, lr.STATE_CLEANUP,
          lr.STATE_STOPPING, lr.STATE_STOPPED, lr.STATE_MISSING]


def locust_says(master_state: str, worker_states: tuple[str, ...]) -> bool:
    nodes = lr.WorkerNodes()
    for i, state in enumerate(worker_states):
        nodes[f"w{i}"] = lr.WorkerNode(f"w{i}", state=state)
    seen: list[str] = []
    fake = SimpleNamespace(state=master_state, clients=nodes, update_state=seen.append)
    lr.MasterRunner.check_stopped(fake)  # type: ignore[arg-type]
    return seen == [lr.STATE_STOPPED]


@pytest.mark.parametrize("master_state", STATES)
def test_the_same_answer_as_locusts_for_every_mix(master_state: str) -> None:
    for count in range(4):
        for states in itertools.product(STATES, repeat=count):
            workers = [lr.WorkerNode(f"w{i}", state=s) for i, s in enumerate(states)]
            assert fleet_stopped(master_state, workers) == locust_says(master_state, states), (
                master_state, states)
