"""How often the Locust master answers a worker's heartbeat, and so how stale the
worker's last word from it can be: the master (orchestrator/link_guard.py) answers at
most once per `reply_every(grace)`, and the worker's watchdog (agents/worker_main.py),
which stops the load when the master has been silent for the grace, allows that much
more, so a link cut shorter than the grace never stops the load."""

from __future__ import annotations


def reply_every(grace: float) -> float:
    """A sixth of the grace, at most 5 s; 0 (every heartbeat answered, as Locust does,
    one a second) when that is under 2 s. At a thousand workers the answers were a fifth
    of the master's CPU."""
    every = min(grace / 6.0, 5.0)
    return every if every >= 2.0 else 0.0
