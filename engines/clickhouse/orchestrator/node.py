"""ClickHouse node actions the orchestrator runs itself: ``OPTIMIZE TABLE ... FINAL``.

ClickHouse's "major compaction" is a statement, not a node tool: for a clickhouse host
without a declared ``compact`` action, the compaction phase runs
``OPTIMIZE TABLE db.t FINAL`` on every table the scenario's workloads use, through
clickhouse-connect over an SSH local forward to the host (so the orchestrator needs no
route to the HTTP port; the DB host reaches its own ``address:port``). Each statement
is an ``action`` event with its duration, like ``nodetool compact``.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

from loadtower.engines.clickhouse.agent.schemas import default_table
from loadtower.engines.clickhouse.agent.session import ClickhouseSession
from loadtower.orchestrator.context import PhaseContext
from loadtower.orchestrator.db_query import reach
from loadtower.orchestrator.secrets import db_password
from loadtower.scenarios.crossref import target_hosts

# what `loadtower sandbox`'s chdb endpoint names itself in every reply (engines/clickhouse/sandbox/chdb_server.py)
SANDBOX_DISPLAY_NAME = "loadtower-sandbox-chdb"


@contextlib.asynccontextmanager
async def _reach(ctx: PhaseContext, host: str, address: str, port: int) -> AsyncIterator[str]:
    """``host:port`` to connect to: an SSH local forward when the actions are SSH ones."""
    async with reach(ctx.actions, host, address, port) as (local, local_port):
        yield f"{local}:{local_port}"


def scenario_tables(ctx: PhaseContext) -> list[str]:
    """``database.table`` of every table the (single-target) scenario's workloads use."""
    sc = ctx.plan.scenario
    names = {
        w.table or sc.target.table or default_table(w.schema_name) for w in sc.workloads.values()
    }
    return [f"{sc.target.keyspace}.{t}" for t in sorted(names)]


async def optimize_final(ctx: PhaseContext, host: str, timeout_s: float) -> dict[str, Any]:
    """Run OPTIMIZE TABLE ... FINAL for the scenario's tables on ``host``; the entry of the
    compaction phase's result (durations, exit status 0 or 1, the error if any)."""
    inventory = ctx.plan.inventory
    creds = inventory.credentials("clickhouse")
    address, port = inventory.hosts[host].address, inventory.db_port(host, "clickhouse")
    entry: dict[str, Any] = {"compaction_s": 0.0, "exit_status": 0, "tables": {}}
    for table in scenario_tables(ctx):
        statement = f"OPTIMIZE TABLE {table} FINAL"
        data = {"action": "compact", "statement": statement}
        ctx.event("action", f"compact on {host}: {statement} started", host=host, data=data)
        start = ctx.clock()
        session = ClickhouseSession(threads=1)
        try:
            async with _reach(ctx, host, address, port) as point:
                await session.connect(
                    [point],
                    port,
                    creds.username,
                    db_password(ctx.plan),
                    "",
                    database=table.split(".")[0],
                    secure=creds.secure,
                    timeout_s=timeout_s,
                )
                took = await session.optimize_final(table)
        except Exception as exc:  # noqa: BLE001 - the phase records the failure and goes on
            took = ctx.clock() - start
            entry["exit_status"] = 1
            entry["error"] = f"{type(exc).__name__}: {exc}"[:500]
            outcome = f"failed: {entry['error'][:200]}"
        else:
            outcome = "done"
        finally:
            await session.close()
        entry["tables"][table] = round(took, 3)
        entry["compaction_s"] = round(entry["compaction_s"] + took, 3)
        ctx.event(
            "action",
            f"compact on {host}: {statement} {outcome} in {took:.1f} s",
            host=host,
            data={**data, "exit_status": entry["exit_status"], "duration_s": round(took, 3)},
        )
        if entry["exit_status"]:
            break
    return entry


def _display_name(point: str, timeout_s: float) -> str:
    import urllib.request

    with urllib.request.urlopen(f"http://{point}/ping", timeout=timeout_s) as reply:  # noqa: S310
        return reply.headers.get("X-ClickHouse-Server-Display-Name", "")


async def warn_sandbox_endpoints(ctx: PhaseContext, timeout_s: float = 5.0) -> list[str]:
    """A ``warning`` event for each ClickHouse host of the (single-target) plan that is the
    sandbox's chdb endpoint, whose timings mean nothing; returns those hosts. A host that
    does not answer is left to the phases to report."""
    import asyncio

    inventory = ctx.plan.inventory
    if ctx.plan.scenario.engine != "clickhouse" or inventory.credentials("clickhouse").secure:
        return []
    flagged = []
    for host in target_hosts(ctx.plan.scenario, inventory):
        address, port = inventory.hosts[host].address, inventory.db_port(host, "clickhouse")
        try:
            async with _reach(ctx, host, address, port) as point:
                name = await asyncio.wait_for(
                    asyncio.to_thread(_display_name, point, timeout_s), timeout_s + 1
                )
        except Exception:  # noqa: BLE001 - not reachable now: the load phase will say so
            continue
        if name == SANDBOX_DISPLAY_NAME:
            flagged.append(host)
            ctx.event(
                "warning",
                f"{host} is the sandbox's chdb endpoint (ClickHouse's engine behind one Python "
                "HTTP server, one query at a time): its ClickHouse TIMINGS MEAN NOTHING",
                host=host,
                data={"display_name": name},
            )
    return flagged
