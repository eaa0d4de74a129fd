"""`compaction`: flush and major compaction under background load; duration and latency impact."""

from __future__ import annotations

from typing import Any

from loadtower.scenarios.models import CompactionPhase
from loadtower.scenarios.orchestrator.context import PhaseContext


async def run_phase(ctx: PhaseContext, index: int, phase: CompactionPhase) -> dict[str, Any]:
    hosts = phase.hosts or list(ctx.db_hosts_up)
    loaded = await ctx.background_load(index, phase)
    await ctx.control.sleep(5.0)
    start = ctx.clock()
    per_host: dict[str, Any] = {}
    for host in hosts:
        if ctx.control.interrupted:
            break
        entry: dict[str, Any] = {}
        if "flush" in ctx.plan.inventory.hosts[host].actions:
            status, _o, _e, took = await ctx.action(host, "flush")
            entry["flush_s"] = round(took, 2)
            entry["flush_exit_status"] = status
        status, _o, err, took = await ctx.action(host, "compact")
        entry["compaction_s"] = round(took, 2)
        entry["exit_status"] = status
        per_host[host] = entry
        ctx.event(
            "compaction",
            f"major compaction on {host} took {took:.1f} s"
            + ("" if status == 0 else f" and failed: {err.strip()[:200]}"),
            host=host,
            data=entry,
        )
    end = ctx.clock()
    await ctx.control.sleep(3.0)
    if loaded:
        await ctx.load.stop()
    before = ctx.stats.window(start - 5, start)
    during = ctx.stats.window(start, max(end, start + 1))
    return {
        "hosts": per_host,
        "duration_s": round(end - start, 2),
        "p99_ms_before": before.p99_ms,
        "p99_ms_during": during.p99_ms,
        "ops_per_s_before": round(before.ops_per_s, 1),
        "ops_per_s_during": round(during.ops_per_s, 1),
    }
