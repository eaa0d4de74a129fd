"""The versions behind a run's figures, beyond the orchestrator's own (facts.py): each DB
host's server version and each agent host's loadtower, Python and drivers.

Stored in ``runs.versions`` under ``databases`` and ``agents``. A host that does not
answer gets ``{"error": ...}`` there and a warning event; the run goes on. A DB host
whose TLS handshake fails (a wrong CA, say) ends the run before any load, with the one
line that names it: this query is the orchestrator's TLS pre-flight.
"""

from __future__ import annotations

import asyncio
from typing import Any

from loadtower.agents.tls import TlsHandshakeError
from loadtower.fleet.facts import agent_versions_command, parse_agent_versions
from loadtower.orchestrator.db_query import db_version
from loadtower.scenarios.plan import Plan

TIMEOUT_S = 20.0


async def _database(pool: Any, plan: Plan, host: str, timeout: float) -> dict[str, Any]:
    try:
        return await db_version(pool, plan, host, timeout)
    except TlsHandshakeError:
        raise
    except Exception as exc:  # noqa: BLE001 - a version we cannot read is said, not fatal
        detail = str(exc) or type(exc).__name__
        return {"engine": plan.inventory.hosts[host].engine, "error": detail}


async def _agent(pool: Any, host: str, python: str, timeout: float) -> dict[str, Any]:
    try:
        status, out, err = await pool.run(host, agent_versions_command(python), timeout=timeout)
    except Exception as exc:  # noqa: BLE001 - as above
        return {"error": str(exc) or type(exc).__name__}
    found = parse_agent_versions(out)
    if found is None:
        last = ((err or out).strip().splitlines() or [f"exit status {status}"])[-1]
        return {"error": f"{python}: {last}"}
    return found


async def collect(
    pool: Any, plan: Plan, db_hosts: list[str], pythons: dict[str, str],
    timeout: float = TIMEOUT_S,
) -> dict[str, Any]:
    """``{"databases": {host: {"engine", "version"}}, "agents": {host: {package: version}}}``
    for the DB hosts `db_hosts` and the agent hosts (with the Python each one runs)."""
    agents = list(pythons)
    found = await asyncio.gather(
        *(_database(pool, plan, host, timeout) for host in db_hosts),
        *(_agent(pool, host, pythons[host], timeout) for host in agents),
    )
    return {
        "databases": dict(zip(db_hosts, found[: len(db_hosts)], strict=True)),
        "agents": dict(zip(agents, found[len(db_hosts) :], strict=True)),
    }


def summary(versions: dict[str, Any]) -> tuple[str, list[tuple[str, str]]]:
    """One line for the event, and (host, problem) for each host without a version."""
    parts, problems = [], []
    for host, entry in versions.get("databases", {}).items():
        if "error" in entry:
            problems.append((host, f"version of {host} unknown: {entry['error']}"))
        else:
            parts.append(f"{host} {entry['engine']} {entry['version']}")
    for host, entry in versions.get("agents", {}).items():
        if "error" in entry:
            problems.append((host, f"driver versions of {host} unknown: {entry['error']}"))
        else:
            drivers = ", ".join(
                f"{name} {version}"
                for name, version in entry.items()
                if name not in ("python",) and version
            )
            parts.append(f"{host}: {drivers}")
    return "versions: " + ("; ".join(parts) or "none found"), problems
