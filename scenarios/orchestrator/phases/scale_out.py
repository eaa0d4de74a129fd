"""`scale_out`: start a standby DB node under background load; time join and streaming."""

from __future__ import annotations

import asyncio
from typing import Any

from loadtower.scenarios.models import ScaleOutPhase
from loadtower.scenarios.orchestrator.context import PhaseContext
from loadtower.scenarios.orchestrator.phases.ring import node_states

POLL_S = 2.0


async def _status_text(ctx: PhaseContext, hosts: list[str]) -> str:
    for host in hosts:
        if "status" in ctx.plan.inventory.hosts[host].actions:
            status, out, _err, _t = await ctx.action_quiet(host, "status")
            if status == 0:
                return out
    return ""


async def run_phase(ctx: PhaseContext, index: int, phase: ScaleOutPhase) -> dict[str, Any]:
    new = phase.host
    address = ctx.plan.inventory.hosts[new].address
    observers = [h for h in ctx.db_hosts_up if h != new] + [new]
    loaded = await ctx.background_load(index, phase)
    baseline_end = ctx.clock()
    await ctx.control.sleep(5.0)  # a few seconds of steady load before the change
    start = ctx.clock()
    status, _out, err, _took = await ctx.action(new, "start")
    result: dict[str, Any] = {"host": new, "address": address, "start_exit_status": status}
    if status != 0:
        ctx.event("scale_out", f"starting {new} failed: {err.strip()[:200]}", host=new)
        result["joined"] = False
    else:
        joining_seen: float | None = None
        joined_at: float | None = None
        while ctx.clock() - start < phase.timeout and not ctx.control.interrupted:
            state = node_states(await _status_text(ctx, observers)).get(address)
            now = ctx.clock()
            if state == "UJ" and joining_seen is None:
                joining_seen = now
                ctx.event("scale_out", f"{new} is joining (UJ) after {now - start:.1f} s", host=new)
            if state == "UN":
                joined_at = now
                break
            await asyncio.sleep(POLL_S)
        result["joined"] = joined_at is not None
        if joined_at is not None:
            result["join_duration_s"] = round(joined_at - start, 1)
            if joining_seen is not None:
                result["streaming_duration_s"] = round(joined_at - joining_seen, 1)
            ctx.db_hosts_up.append(new)
            ctx.event(
                "scale_out",
                f"{new} ({address}) is UN: joined in {joined_at - start:.1f} s"
                + (f", streaming took {joined_at - joining_seen:.1f} s" if joining_seen else ""),
                host=new,
                data=result,
            )
        else:
            ctx.event(
                "scale_out",
                f"{new} did not reach UN within {phase.timeout:g} s",
                host=new,
                data=result,
            )
        await ctx.control.sleep(5.0)  # steady load on the grown cluster
    if loaded:
        await ctx.load.stop()
    before = ctx.stats.window(baseline_end - 5, start)
    during = ctx.stats.window(start, ctx.clock())
    result.update(
        {
            "p99_ms_before": before.p99_ms,
            "p99_ms_during": during.p99_ms,
            "errors_during": during.errors,
        }
    )
    return result
