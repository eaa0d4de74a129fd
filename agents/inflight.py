"""The asyncio path's ops in flight, per phase: what a phase's drain waits for.

Each op takes a ticket when it is sent (with the phase it was scheduled in) and gives
it back when it completes. A drain waits until its phase has no ticket left, or its
bound passes; then the tickets still out are abandoned: the caller counts each once as
a `DrainTimeout` error, and `end()` tells the op, when it completes after all, that it
must not be counted again.
"""

from __future__ import annotations

import asyncio

# A phase's drain waits this long for its ops in flight: the request timeout an engine's
# agent part gives its session drivers and its native core (12 s) plus 3 s of margin, so
# on those paths every op ends (answered, or failed by the client's own timeout) before
# it. A client that waits longer (an HTTP client's 300 s): its ops still out then are
# DrainTimeout.
DRAIN_TIMEOUT_S = 12.0 + 3.0


class DrainTimeout(Exception):
    """An op still in flight when its phase's drain bound passed."""


class Ticket:
    __slots__ = ("phase", "op", "intended", "late", "abandoned")

    def __init__(self, phase: str, op: str, intended: float, late: bool) -> None:
        self.phase, self.op, self.intended, self.late = phase, op, intended, late
        self.abandoned = False


class InFlight:
    """Tickets by phase; used from the engine's event loop only."""

    def __init__(self) -> None:
        self._open: dict[str, set[Ticket]] = {}
        self._empty: dict[str, asyncio.Event] = {}

    def begin(self, phase: str, op: str, intended: float, late: bool) -> Ticket:
        ticket = Ticket(phase, op, intended, late)
        self._open.setdefault(phase, set()).add(ticket)
        event = self._empty.get(phase)
        if event is not None:
            event.clear()
        return ticket

    def end(self, ticket: Ticket) -> bool:
        """The op completed: True if it is to be counted (it was not abandoned)."""
        if ticket.abandoned:
            return False
        tickets = self._open.get(ticket.phase)
        if tickets is not None:
            tickets.discard(ticket)
            if not tickets:
                event = self._empty.get(ticket.phase)
                if event is not None:
                    event.set()
        return True

    def count(self, phase: str) -> int:
        return len(self._open.get(phase, ()))

    async def wait(self, phase: str, timeout: float) -> bool:
        """Until `phase` has no op in flight (True) or `timeout` seconds passed (False)."""
        if not self._open.get(phase):
            return True
        event = self._empty.setdefault(phase, asyncio.Event())
        event.clear()
        try:
            await asyncio.wait_for(event.wait(), max(0.0, timeout))
        except TimeoutError:
            return not self._open.get(phase)
        return True

    def abandon(self, phase: str) -> list[Ticket]:
        """Give up on the phase's ops still in flight; their completion will not count."""
        tickets = self._open.pop(phase, set())
        self._empty.pop(phase, None)
        for ticket in tickets:
            ticket.abandoned = True
        return sorted(tickets, key=lambda t: t.intended)

