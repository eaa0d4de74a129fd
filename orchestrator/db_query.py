"""What the orchestrator's own queries to a DB host share: the way there and a bound.

An engine's hooks (``engines.py``) query a host themselves (its version, a joined node's
streams, its own figures) through an SSH local forward to the host (``reach``: the
orchestrator needs no route to the database's port; the DB host reaches its own
``address:port``), each wait bounded (``QUERY_TIMEOUT_S`` unless told). ``db_version``
asks the engine's ``version`` hook.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

from loadtower.scenarios.engine_hooks import hook
from loadtower.scenarios.plan import Plan

QUERY_TIMEOUT_S = 15.0


@contextlib.asynccontextmanager
async def reach(actions: Any, host: str, address: str, port: int) -> AsyncIterator[tuple[str, int]]:
    """``(host, port)`` to connect to: an SSH local forward when the actions are SSH ones
    (``fleet.ssh_pool.HostPool``), else ``address:port`` itself."""
    forward = getattr(actions, "forward_local_port", None)
    if forward is None:  # not over SSH (tests with fake actions): connect directly
        yield address, port
        return
    listener = await forward(host, address, port)
    try:
        yield "127.0.0.1", int(listener.get_port())
    finally:
        listener.close()


async def db_version(
    actions: Any, plan: Plan, host: str, timeout: float = QUERY_TIMEOUT_S
) -> dict[str, Any]:
    """``{"engine": ..., "version": ...}`` of DB host `host`, from its engine's ``version``
    hook (``engines.py``)."""
    engine = str(plan.inventory.hosts[host].engine)
    found_version = hook(engine, "version")
    if found_version is None:
        raise ValueError(f"loadtower cannot ask a {engine} server for its version")
    return {"engine": engine, **await found_version(actions, plan, host, timeout)}
