"""A scenario's targets as the orchestrator runs them, and how the load reaches each one.

A scenario without ``[targets.*]`` is one unnamed target. With targets, the phases run
once per target in order, each with a plan whose scenario has that target only
(``Plan.target_plans``, ``Scenario.for_target``); stored phase names get the prefix
``TARGET:``.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from loadtower.orchestrator.secrets import db_password
from loadtower.orchestrator.tls_files import tls_options, tls_spec
from loadtower.protocol.engine_kinds import kind
from loadtower.protocol.phase_spec import PhaseSpec
from loadtower.scenarios.crossref import engines_match, target_hosts
from loadtower.scenarios.plan import Plan

SEPARATOR = ":"


def db_hosts(plan: Plan) -> list[str]:
    """The running DB hosts that the scenario's targets use, in inventory order: those
    whose node metrics are sampled and whose server versions are recorded (a host of an
    engine no target runs is not watched)."""
    used = {h for _name, p in plan.target_plans() for h in target_hosts(p.scenario, p.inventory)}
    return [h for h in plan.inventory.with_role("db") if h in used]


def phase_prefix(name: str | None) -> str:
    return f"{name}{SEPARATOR}" if name else ""


def engine_plan(plan: Plan, engine: str) -> Plan:
    """The plan with another scenario engine (whose credentials then apply)."""
    if plan.scenario.engine == engine:
        return plan
    return dataclasses.replace(plan, scenario=plan.scenario.model_copy(update={"engine": engine}))


def check_passwords(targets: list[tuple[str | None, Plan]]) -> list[str]:
    """Every target engine's password, read once (LoadtowerError naming the key when one
    cannot be read); those long enough to mask in logs and events."""
    passwords = [db_password(plan) for _name, plan in targets]
    return [pw for pw in passwords if pw and len(pw) >= 4]


def _point(address: str, port: int | None, default: int) -> str:
    if port is None or port == default:
        return address
    return f"[{address}]:{port}" if ":" in address else f"{address}:{port}"


def connection(plan: Plan, spec: PhaseSpec) -> dict[str, Any]:
    """What the Locust master's ``start`` command needs to reach the spec's target:
    contact points (``address`` or ``address:port`` for a host with its own port), the
    engine's port and login, the password when the engine is not the one whose password
    the master got at start, and the spec with ``connection`` options for the workers."""
    inventory = plan.inventory
    engine = str(spec.get("engine") or plan.scenario.engine)
    target = spec.get("target") or {}
    running = inventory.with_role("db")
    named = target.get("hosts")
    hosts = (
        [n for n in named if n in running]
        if named
        else [n for n, h in running.items() if engines_match(engine, h.engine)]
    )
    creds = inventory.credentials(engine)
    port = creds.port or kind(engine).default_port
    out: dict[str, Any] = {
        "contact_points": [_point(running[n].address, running[n].port, port) for n in hosts],
        "port": port,
        "username": creds.username,
        "database": creds.database,
        "spec": {**spec, "connection": connection_options(plan, engine, hosts)},
    }
    if engine != plan.scenario.engine:
        out["password"] = db_password(engine_plan(plan, engine)) or ""
    return out


def connection_options(plan: Plan, engine: str, hosts: list[str]) -> dict[str, Any]:
    """The spec's ``connection``: ``secure`` (HTTPS engines); for engines with TLS files, TLS
    (the PEM contents: an agent cannot read the orchestrator's files) and the names of the
    target's nodes."""
    creds = plan.inventory.credentials(engine)
    out: dict[str, Any] = {"secure": creds.secure}
    tls = tls_spec(tls_options(plan, engine))
    if tls is not None:
        out["tls"] = tls
        out["names"] = {plan.inventory.hosts[n].address: n for n in hosts}
    return out
