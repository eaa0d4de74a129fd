"""The Locust master's list of its workers, with Locust's by-state reads made cheap.

Locust's master handles each `client_ready` (a worker joining, or back after a stop) by
logging how many workers are ready, running and spawning, and each worker `quit` by how
many are ready. Its `WorkerNodes` answers each of those reads with a walk over every
worker through the mapping's generic views: a Python call per worker. At a thousand
workers that is half a millisecond a message, about half a second of the master's CPU at
each phase's stop, when every worker answers at once (bench/fleet.py; issue 28); the
stop's `stopped` waits for it. The list here reads the same workers, in the same order,
straight from Locust's own dict. Locust is imported only when the list is made (its
import patches the process for gevent).
"""

from __future__ import annotations

from typing import Any


def worker_list() -> Any:
    """An empty `locust.runners.WorkerNodes` whose by-state reads skip the generic views;
    Locust's own reads where its storage is not the dict it has had since 2.x."""
    import locust.runners as lr

    class WorkerList(lr.WorkerNodes):
        def get_by_state(self, state: str) -> list[Any]:
            nodes = getattr(self, "_worker_nodes", None)
            if not isinstance(nodes, dict):
                return super().get_by_state(state)
            return [node for node in nodes.values() if node.state == state]

    return WorkerList()
