"""`scale_out`: start a standby DB node under background load; time its join and streaming.

The node's `start` action runs while the ring is polled through the `status` action
(of a node already up) every POLL_S, each poll bounded by min(30 s, what is left of
the phase's `timeout`): the first poll that shows the node `UJ` and the first that
shows it `UN` give the time to joining and the join duration (to within one poll).
The streaming time comes from the joined node itself when it keeps a record of its
streams (its engine's ``bootstrap_streams`` hook: the Bootstrap operation's own duration
and bytes); otherwise from the polls (UJ seen -> UN seen).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from loadtower.orchestrator.context import PhaseContext, failure_message
from loadtower.orchestrator.phases.impact import impact
from loadtower.orchestrator.phases.ring import node_states
from loadtower.scenarios.engine_hooks import NoRecord, hook
from loadtower.scenarios.models import ScaleOutPhase

POLL_S = 1.0  # pause between status polls
POLL_TIMEOUT_S = 30.0  # one status poll at most
STEADY_S = 5.0  # steady load before the start and after the join
STREAMS_WAIT_S = 20.0  # for the joined node to answer
STREAMS_TIMEOUT_S = 10.0  # one ask at most


@dataclass
class JoinWatch:
    """What the status polls saw."""

    polls: int = 0
    joining_at: float | None = None
    joined_at: float | None = None
    last_state: str | None = None


async def _status_text(ctx: PhaseContext, hosts: list[str], timeout: float) -> str:
    for host in hosts:
        if "status" in ctx.plan.inventory.hosts[host].actions:
            status, out, _err, _t = await ctx.action_quiet(host, "status", timeout=timeout)
            if status == 0:
                return out
    return ""


async def _watch(
    ctx: PhaseContext,
    new: str,
    observers: list[str],
    start: float,
    deadline: float,
    starting: asyncio.Task[tuple[int, str, str, float]],
) -> JoinWatch:
    address = ctx.plan.inventory.hosts[new].address
    seen = JoinWatch()
    while not ctx.control.interrupted:
        remaining = deadline - ctx.clock()
        if remaining <= 0:
            break
        if starting.done() and (starting.exception() or starting.result()[0] != 0):
            break  # the start action failed: nothing will join
        text = await _status_text(ctx, observers, min(POLL_TIMEOUT_S, remaining))
        seen.polls += 1
        state = node_states(text).get(address)
        now = ctx.clock()
        if state is not None:
            seen.last_state = state
        if state == "UJ" and seen.joining_at is None:
            seen.joining_at = now
            ctx.event("scale_out", f"{new} is joining (UJ) after {now - start:.1f} s", host=new)
        if state == "UN":
            seen.joined_at = now
            break
        await ctx.control.sleep(min(POLL_S, max(0.0, deadline - ctx.clock())))
    return seen


async def bootstrap_streams(ctx: PhaseContext, host: str, deadline: float) -> dict[str, Any] | None:
    """The joined node's own record of its Bootstrap streams (its engine's
    ``bootstrap_streams`` hook), or None when it keeps none (no hook, no record, or it does
    not answer in time)."""
    streams = hook(ctx.plan.inventory.hosts[host].engine, "bootstrap_streams")
    if streams is None:
        return None
    give_up = min(deadline, ctx.clock() + STREAMS_WAIT_S)
    while not ctx.control.interrupted:
        try:
            found: dict[str, Any] | None = await streams(
                ctx.actions, ctx.plan, host, STREAMS_TIMEOUT_S)
            return found
        except NoRecord as exc:  # the node keeps no such record
            ctx.event("scale_out", f"{host}: no record of its streams ({exc})", host=host)
            return None
        except Exception as exc:  # noqa: BLE001 - not answering yet
            if ctx.clock() >= give_up:
                ctx.event("scale_out", f"{host}: no record of its streams ({exc})", host=host)
                return None
            await ctx.control.sleep(1.0)
    return None


async def run_phase(ctx: PhaseContext, index: int, phase: ScaleOutPhase) -> dict[str, Any]:
    new = phase.host
    address = ctx.plan.inventory.hosts[new].address
    observers = [h for h in ctx.db_hosts_up if h != new] + [new]
    phase_start = ctx.clock()
    loaded = await ctx.background_load(index, phase)
    await ctx.control.sleep(STEADY_S)  # a few seconds of steady load before the change
    start = ctx.clock()
    deadline = start + phase.timeout
    starting = asyncio.create_task(ctx.action(new, "start", timeout=phase.timeout))
    try:
        seen = await _watch(ctx, new, observers, start, deadline, starting)
        if ctx.control.interrupted and not starting.done():
            starting.cancel()
            ctx.event(
                "scale_out", f"starting {new}: no longer waited for (phase interrupted)", host=new
            )
        await asyncio.wait({starting})  # the start action ends by the deadline by itself
    finally:
        if not starting.done():  # this phase itself was cancelled
            starting.cancel()
    status, out, err, took = -1, "", "", ctx.clock() - start
    if not starting.cancelled():
        status, out, err, took = starting.result()
    result: dict[str, Any] = {
        "host": new,
        "address": address,
        "start_exit_status": status,
        "start_s": round(took, 1),
        "status_polls": seen.polls,
    }
    if status != 0 and seen.joined_at is None:
        reason = failure_message(status, out, err) if status > 0 else "interrupted"
        ctx.event("scale_out", f"starting {new} failed: {reason}", host=new, data=result)
        result["joined"] = False
    elif seen.joined_at is None:
        result["joined"] = False
        ctx.event(
            "scale_out",
            f"{new} did not reach UN within {phase.timeout:g} s"
            + (f" (last seen {seen.last_state})" if seen.last_state else ""),
            host=new,
            data=result,
        )
    else:
        result["joined"] = True
        result["join_duration_s"] = round(seen.joined_at - start, 1)
        if seen.joining_at is not None:
            result["joining_after_s"] = round(seen.joining_at - start, 1)
        ctx.db_hosts_up.append(new)
        streams = await bootstrap_streams(ctx, new, deadline)
        if streams is not None:
            result.update(streams)  # with its streaming_source, the engine's
        elif seen.joining_at is not None:
            result["streaming_duration_s"] = round(seen.joined_at - seen.joining_at, 1)
            result["streaming_source"] = f"status polls (UJ to UN, within {POLL_S:g} s + a poll)"
        streaming = (
            f", streaming took {result['streaming_duration_s']:.1f} s "
            f"({result['streaming_source']})"
            if "streaming_duration_s" in result
            else ""
        )
        ctx.event(
            "scale_out",
            f"{new} ({address}) is UN: joined in {result['join_duration_s']:.1f} s{streaming}",
            host=new,
            data=result,
        )
        await ctx.control.sleep(STEADY_S)  # steady load on the grown cluster
    if loaded:
        await ctx.load.stop()
    end = ctx.clock()
    windows = {"before": (int(phase_start) + 1, int(start)), "during": (int(start), end)}
    result["during_from"] = int(start)
    result.update(
        impact(
            ctx,
            windows,
            {
                "before": ("p99_ms", "ops_per_s", "errors"),
                "during": ("p99_ms", "ops_per_s", "errors", "errors_by_class"),
            },
        )
    )
    return result
