"""ClickHouse's server version for the run's record: ``SELECT version()`` through
clickhouse-connect over an SSH local forward to the host (the engine's ``version`` hook)."""

from __future__ import annotations

import asyncio
from typing import Any

from loadtower.orchestrator.db_query import QUERY_TIMEOUT_S, reach
from loadtower.orchestrator.secrets import engine_password
from loadtower.scenarios.plan import Plan


def _server_version(
    host: str, port: int, username: str | None, password: str | None, secure: bool,
    timeout: float,
) -> str:
    import clickhouse_connect

    client = clickhouse_connect.get_client(
        host=host,
        port=port,
        username=username or "default",
        password=password or "",
        secure=secure,
        connect_timeout=timeout,
        send_receive_timeout=timeout,
    )
    try:
        return str(client.command("SELECT version()"))
    finally:
        client.close()


async def version(
    actions: Any, plan: Plan, host: str, timeout: float = QUERY_TIMEOUT_S
) -> dict[str, Any]:
    """``{"version": ...}`` of ClickHouse host `host`: ``SELECT version()``."""
    inventory = plan.inventory
    creds = inventory.credentials("clickhouse")
    address, port = inventory.hosts[host].address, inventory.db_port(host, "clickhouse")
    password = engine_password(plan, "clickhouse")
    async with reach(actions, host, address, port) as (point, local_port):
        found = await asyncio.wait_for(
            asyncio.to_thread(
                _server_version, point, local_port, creds.username, password,
                creds.secure, timeout,
            ),
            timeout * 3,
        )
    return {"version": found}
