"""When an open-model lane sends its next op (docs/agent-protocol.md, "Sending on time").

The agent's loop runs on `precise_selector` (a wait with a timeout ends on time, not up to
a millisecond after), but a thread that slept still takes time to get the CPU back (on a
VM whose idle vCPU halts, ~0.1 ms at the median here). So a lane sleeps until `spin`
before an op's intended start, then yields to the loop (other ops' sends and replies run
meanwhile) until that start: `lane_spin(interval)` is a tenth of the lane's interval, at
most SPIN_MAX_S, so the turns cost at most a tenth of a core whatever the rate (the
figures are in docs/agent-protocol.md). On the default loop (no
timerfd: not Linux) a sub-millisecond spin would buy nothing, and the spin is 0.
`LOADTOWER_LANE_SPIN_S` (seconds) on the agent sets the spin for every lane; 0 turns it off.
"""

from __future__ import annotations

import asyncio
import os
import time

from loadtower.agents import precise_selector

SPIN_MAX_S = 0.0001
_SPIN_SET = os.environ.get("LOADTOWER_LANE_SPIN_S")


def lane_spin(interval: float) -> float:
    """How long before each intended start a lane with this interval stops sleeping."""
    if _SPIN_SET is not None:
        return max(0.0, float(_SPIN_SET))
    if not precise_selector.PRECISE:
        return 0.0
    return min(SPIN_MAX_S, interval / 10)


async def wait_until(t: float, spin: float) -> None:
    """Until monotonic time `t`: asyncio's sleep to `spin` before it, then the loop's
    turns to `t` (never returns before `t`)."""
    delay = t - time.monotonic()
    if delay > spin:
        await asyncio.sleep(delay - spin)
    while time.monotonic() < t:
        await asyncio.sleep(0)
