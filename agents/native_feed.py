"""What the driver loop asks of an engine's native load core: the feed that hands it
a phase's lanes, rate and workload file and merges what it measured into the agent's
recorder (``agents/driver_loop.py``).

An engine whose agents have such a core (the Rust load core, its package's native/ crate) names
its feed in its kind (``native_feed``, ``"module:Class"`` in its package's ``agent/``
part); the driver loop makes one per agent process the first time a phase of such an
engine is configured, and never imports the engine's package.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from loadtower.agents.measure import IntervalRecorder
from loadtower.protocol.engine_kinds import kind, load_attribute


class NativeFeed(Protocol):
    phase: str  # the phase its ops are recorded under
    phase_counts: dict[str, int] | None  # the last drained phase's intended/counted/abandoned
    # the kind of the event that says which path a phase's sends take, and why
    path_event: str

    def asked(self, cfg: Any) -> bool: ...  # the target asks for the native core
    def available(self) -> bool: ...  # the core is installed on this host
    def why_not_file(self, cfg: Any, engine: str, spec: Mapping[str, Any]) -> str | None: ...
    def connect_early(self, cfg: Any, key: tuple) -> None: ...
    async def configure_file(self, cfg: Any, key: tuple, spec: Mapping[str, Any],
                             records: int, load: tuple[str, int, int, int] | None) -> None: ...
    async def lane(self, stopped: asyncio.Event, rate: float) -> None: ...
    def set_lane_rate(self, rate: float) -> None: ...
    async def closed_lane(self, stopped: asyncio.Event) -> None: ...
    async def load_lane(self, stopped: asyncio.Event) -> bool: ...
    def load_failed(self) -> int: ...
    async def idle(self) -> None: ...
    def in_flight(self) -> int: ...
    async def drain(self, deadline: float) -> int: ...
    def harvest(self, upto: int, final: bool = False) -> None: ...
    async def close(self) -> None: ...


def new_feed(engine: str, recorder: IntervalRecorder, warn: Callable[[str], None],
             out: Callable[[Mapping[str, Any]], None]) -> NativeFeed | None:
    """`engine`'s native feed over this agent's recorder, or None: it has none."""
    where = kind(engine).native_feed
    if where is None:
        return None
    feed: NativeFeed = load_attribute(where)(recorder, warn, out)
    return feed
