"""Which nodes coordinated a phase's ops: per node, the requests it coordinated on the
scenario's keyspace between the phase's start and end.

The engine's ``coordinated`` hook (``engines.py``) gives a node's count since it started
(the coordinator's own: a client's requests count at the node they were sent to, whoever
holds the replicas); an engine without that hook has no such record. The deltas of two
readings are the phase's.

Each node is asked alone, in parallel, each bounded by a short timeout: a node that does
not answer is named and never holds the phase up longer than that.
"""

from __future__ import annotations

import asyncio
from typing import Any

from loadtower.fleet.cancel_tasks import bounded
from loadtower.scenarios.crossref import engines_match
from loadtower.scenarios.engine_hooks import hook
from loadtower.scenarios.plan import Plan

TIMEOUT_S = 3.0  # per query; a node gets twice that in all (a paused one: no longer)


def hosts_of(plan: Plan) -> list[str]:
    """The hosts of the plan's target (standby ones too: they may have joined), or none when
    its engine has no ``coordinated`` hook."""
    engine = plan.scenario.engine
    if hook(engine, "coordinated") is None:
        return []
    named = getattr(plan.scenario.target, "hosts", None)
    return [
        name for name, host in plan.inventory.with_role("db", include_standby=True).items()
        if engines_match(engine, host.engine) and (not named or name in named)
    ]


async def _count(actions: Any, plan: Plan, host: str, timeout: float) -> int:
    coordinated = hook(plan.scenario.engine, "coordinated")
    return int(await bounded(coordinated(actions, plan, host, timeout), timeout * 2))


async def snapshot(
    actions: Any, plan: Plan, hosts: list[str], timeout: float = TIMEOUT_S
) -> tuple[dict[str, int], dict[str, str]]:
    """({host: requests coordinated so far}, {host: why it did not answer})."""
    found = await asyncio.gather(
        *(_count(actions, plan, h, timeout) for h in hosts), return_exceptions=True
    )
    counts: dict[str, int] = {}
    missing: dict[str, str] = {}
    for host, value in zip(hosts, found, strict=True):
        if isinstance(value, BaseException):
            missing[host] = str(value) or type(value).__name__
        else:
            counts[host] = value
    return counts, missing


def deltas(before: dict[str, int], after: dict[str, int]) -> dict[str, int]:
    """Requests per node between two snapshots; a node that restarted (its count went
    down) counts from zero."""
    out = {}
    for host, count in after.items():
        start = before.get(host, 0)
        out[host] = count - start if count >= start else count
    return out


def line(label: str, counts: dict[str, int], missing: list[str]) -> str:
    total = sum(counts.values())
    parts = [
        f"{h} {n:,} ({100 * n / total:.0f}%)" if total else f"{h} {n:,}"
        for h, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    ]
    text = f"phase {label}: requests coordinated per node: " + (", ".join(parts) or "none")
    if missing:
        text += f"; no answer from {', '.join(missing)}"
    return text


class PhaseCoordinators:
    """One phase's reading: ``start`` before its handler, ``finish`` after it."""

    def __init__(self, actions: Any, plan: Plan, standby: set[str]) -> None:
        self.actions, self.plan, self.standby = actions, plan, standby
        self.hosts = hosts_of(plan)
        self.before: dict[str, int] = {}
        self.missing: dict[str, str] = {}

    async def start(self) -> None:
        if self.hosts:
            self.before, self.missing = await snapshot(self.actions, self.plan, self.hosts)

    async def finish(self) -> tuple[dict[str, int], list[str]] | None:
        """({host: requests} over the phase, hosts that did not answer) or None when the
        target's engine keeps no such record. A standby node that is not running is no news."""
        if not self.hosts:
            return None
        after, missing = await snapshot(self.actions, self.plan, self.hosts)
        counts = deltas({h: self.before.get(h, 0) for h in after}, after)
        gone = {**self.missing, **missing}
        named = [h for h in self.hosts if h in gone and h not in counts
                 and not (h in self.standby and h not in self.before)]
        return counts, named
