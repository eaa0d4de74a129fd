"""One handler per phase type; the registry maps a phase's `type` to its handler."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from loadtower.orchestrator.context import PhaseContext
from loadtower.orchestrator.phases import (
    compaction,
    fault,
    flush,
    load,
    pause,
    ramp,
    run,
    scale_out,
    search,
)

Handler = Callable[[PhaseContext, int, Any], Awaitable[dict[str, Any]]]

HANDLERS: dict[str, Handler] = {
    "load": load.run_phase,
    "run": run.run_phase,
    "ramp": ramp.run_phase,
    "scale_out": scale_out.run_phase,
    "compaction": compaction.run_phase,
    "flush": flush.run_phase,
    "pause": pause.run_phase,
    "fault": fault.run_phase,
    "search": search.run_phase,
}
