"""`compaction`: flush and major compaction under background load; duration and latency impact.

Hosts of an engine whose compaction is an ``action`` (its kind's ``compaction``) run
their declared `flush` (if any) and `compact` actions (e.g. nodetool). Hosts of an
engine whose compaction is a ``statement`` run the engine's own (its ``compact`` hook,
named by ``compact_what``, e.g. ``OPTIMIZE TABLE ... FINAL``) on the scenario's tables,
unless they declare a `compact` action of their own.

The phase's `timeout` bounds each action (and each compaction statement): one that runs
longer is recorded as failed (exit status 124) and the phase goes on with the next host.

The p99 and ops/s of the 5 s before and of the compaction itself come from the phase's
own ops (``impact.py``), only where load ran: a phase without a rate or users says
"no load ran before/during".
"""

from __future__ import annotations

from typing import Any

from loadtower.orchestrator.context import PhaseContext, failure_message
from loadtower.orchestrator.phases.impact import impact
from loadtower.scenarios.crossref import target_hosts
from loadtower.scenarios.engine_hooks import compact_what, hook
from loadtower.scenarios.models import CompactionPhase


async def run_phase(ctx: PhaseContext, index: int, phase: CompactionPhase) -> dict[str, Any]:
    mine = set(target_hosts(ctx.plan.scenario, ctx.plan.inventory, include_standby=True))
    hosts = phase.hosts or [h for h in ctx.db_hosts_up if h in mine]
    loaded = await ctx.background_load(index, phase)
    await ctx.control.sleep(5.0)
    start = ctx.clock()
    per_host: dict[str, Any] = {}
    for host in hosts:
        if ctx.control.interrupted:
            break
        entry: dict[str, Any] = {}
        actions = ctx.plan.inventory.hosts[host].actions
        engine = ctx.plan.inventory.hosts[host].engine
        compact = hook(engine, "compact")
        if compact is not None and "compact" not in actions:  # the engine's own statement
            entry = await compact(ctx, host, phase.timeout)
            took, status, err = entry["compaction_s"], entry["exit_status"], entry.get("error", "")
            what = compact_what(engine)
        else:
            if "flush" in actions:
                status, _o, _e, took = await ctx.action(host, "flush", timeout=phase.timeout)
                entry["flush_s"] = round(took, 2)
                entry["flush_exit_status"] = status
            status, out, err, took = await ctx.action(host, "compact", timeout=phase.timeout)
            entry["compaction_s"] = round(took, 2)
            entry["exit_status"] = status
            if status != 0:
                entry["error"] = err = failure_message(status, out, err)
            what = "major compaction"
        per_host[host] = entry
        ctx.event(
            "compaction",
            f"{what} on {host} took {took:.1f} s"
            + ("" if status == 0 else f" and failed: {err.strip()}"),
            host=host,
            data=entry,
        )
    end = ctx.clock()
    await ctx.control.sleep(3.0)
    if loaded:
        await ctx.load.stop()
    windows = {"before": (start - 5, start), "during": (start, max(end, start + 1))}
    figures = impact(ctx, windows, {name: ("p99_ms", "ops_per_s") for name in windows})
    return {"hosts": per_host, "duration_s": round(end - start, 2), **figures}
