"""The master's worker list (orchestrator/worker_list.py) answers Locust's by-state reads
with the same workers in the same order as Locust's own WorkerNodes, through every mix of
joins, state changes and removals, and it is the list the guarded master runner uses."""

from __future__ import annotations

import random
from typing import Any

import locust.runners as lr

from loadtower.orchestrator.link_guard import LinkGuard
from loadtower.orchestrator.worker_list import worker_list

STATES = [lr.STATE_INIT, lr.STATE_SPAWNING, lr.STATE_RUNNING, lr.STATE_CLEANUP,
          lr.STATE_STOPPING, lr.STATE_STOPPED, lr.STATE_MISSING]


def _reads(nodes: Any) -> list[list[int]]:
    reads = [nodes.ready, nodes.spawning, nodes.running, nodes.missing, list(nodes.all)]
    reads += [nodes.get_by_state(state) for state in STATES]
    return [[id(node) for node in read] for read in reads]


def test_the_same_workers_in_the_same_order_as_locusts_list() -> None:
    rng = random.Random(28)
    theirs, ours = lr.WorkerNodes(), worker_list()
    assert isinstance(ours, lr.WorkerNodes)
    for step in range(3000):
        roll = rng.random()
        names = list(theirs)
        if roll < 0.4 or not names:  # a worker joins, or is back (a new node, at the end)
            name = f"w{rng.randrange(60)}"
            node = lr.WorkerNode(name, state=rng.choice(STATES))
            theirs[name] = ours[name] = node
        elif roll < 0.8:  # its state changes (a heartbeat, a spawn, a stop)
            theirs[rng.choice(names)].state = rng.choice(STATES)
        else:  # it stopped or quit
            name = rng.choice(names)
            del theirs[name], ours[name]
        assert _reads(ours) == _reads(theirs), step
        assert len(ours) == len(theirs)


def test_the_guarded_master_runner_keeps_its_workers_in_it() -> None:
    from locust.env import Environment
    from locust.rpc import zmqrpc

    from loadtower.orchestrator.locust_master import _guarded_runner

    server_class = zmqrpc.Server  # the runner installs the bounded one: put back after
    runner = _guarded_runner(Environment(user_classes=[]), "127.0.0.1", 0,
                             LinkGuard(b"k" * 32, lambda *_: None))
    try:
        assert type(runner.clients).__name__ == "WorkerList" and len(runner.clients) == 0
    finally:
        runner.quit()
        zmqrpc.Server = server_class
