"""`flush`: every database host of the target whose engine flushes (its kind's
``flush_action``) runs its declared ``flush`` action (e.g. nodetool flush), one after another, so that what is in the memtables (rows,
expired cells, tombstones) is on disk before the next phase reads it (study 3).

Each host's flush is one ``flush`` event: how long it took or, failed, one line with
its exit status and the tool's last line (a timeout is exit status 124). A failed
flush does not end the run: the phase's result lists it and later phases go on, the
figures of a read phase after it then show what an unflushed table gives. Hosts of
other engines have nothing to flush (they write to disk at once): one event names
them.
"""

from __future__ import annotations

from typing import Any

from loadtower.orchestrator.context import PhaseContext, failure_message
from loadtower.protocol.engine_kinds import titles, with_capability
from loadtower.scenarios.crossref import target_hosts
from loadtower.scenarios.models import FlushPhase


async def run_phase(ctx: PhaseContext, index: int, phase: FlushPhase) -> dict[str, Any]:
    mine = set(target_hosts(ctx.plan.scenario, ctx.plan.inventory))
    hosts = phase.hosts or [h for h in ctx.db_hosts_up if h in mine]
    inventory = ctx.plan.inventory.hosts
    flushing = with_capability(flush_action=True)
    flushed = [h for h in hosts if inventory[h].engine in flushing]
    others = [h for h in hosts if h not in flushed]
    if others:
        ctx.event("flush", f"nothing to flush on {', '.join(others)} (not {titles(flushing)})")
    start = ctx.clock()
    per_host: dict[str, Any] = {}
    for host in flushed:
        if ctx.control.interrupted:
            break
        status, out, err, took = await ctx.action(host, "flush", timeout=phase.timeout)
        entry: dict[str, Any] = {"flush_s": round(took, 2), "exit_status": status}
        if status == 0:
            message = f"flush on {host} took {took:.1f} s"
        else:
            lines = failure_message(status, out, err).strip().splitlines()
            entry["error"] = lines[-1] if lines else "no output"
            message = f"flush on {host} failed (exit status {status}): {entry['error']}"
        per_host[host] = entry
        ctx.event("flush", message, host=host, data=entry)
    failed = sorted(h for h, e in per_host.items() if e["exit_status"] != 0)
    result: dict[str, Any] = {"hosts": per_host, "duration_s": round(ctx.clock() - start, 2)}
    if failed:
        result["failed_hosts"] = failed
    return result

