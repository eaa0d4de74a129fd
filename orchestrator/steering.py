"""Steering a run phase while it runs: the operator changes its open model's total rate
(``rate N``) or its closed model's users (``users N``) from the TUI or with
`loadtower control RUN rate N` (both through the run's control socket).

Each change reaches the agents at once (the Locust master's ``lt_rate`` to every worker,
or Locust's spawning), is stored as an event (``rate_change`` / ``users_change``, its
data: phase, from, to, at_s since the phase's start) and is listed in the phase's
result (``steered``) and its end line. The agents' schedules go on from their next
intended start at the new interval: no intended op is dropped or counted twice.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from loadtower.errors import LoadtowerError
from loadtower.orchestrator.context import PhaseContext

MAX_RATE = 10_000_000.0  # ops/s: more is a typing slip, not a benchmark
MAX_USERS = 100_000
UNITS = {"rate": "ops/s", "users": "users"}
EVENT_KINDS = {"rate": "rate_change", "users": "users_change"}


def amount(kind: str, value: float) -> str:
    """`1,000 ops/s`, `64 users`."""
    return f"{value:,.10g} {UNITS[kind]}"


@dataclass
class Steering:
    """The steering of one run phase (``label``): what the operator may change (``kind``:
    rate for an open model, users for a closed one), its current value, the changes."""

    ctx: PhaseContext
    label: str
    kind: str
    value: float
    started: float
    changes: list[dict[str, Any]] = field(default_factory=list)

    def problem(self, kind: str, value: float) -> str | None:
        """Why `kind` `value` cannot be set (None: it can)."""
        if kind != self.kind:
            model = "an open model (a rate)" if self.kind == "rate" else "a closed model (users)"
            return (f"phase {self.label} runs {model}: steer it with "
                    f"'{self.kind} N', not '{kind}'")
        if not math.isfinite(value) or value <= 0:
            return f"{kind} must be above 0 (got {value:g})"
        if kind == "rate" and value > MAX_RATE:
            return f"rate {value:g} is above {MAX_RATE:,.0f} ops/s"
        if kind == "users" and (value != int(value) or value > MAX_USERS):
            return f"users must be a whole number up to {MAX_USERS:,} (got {value:g})"
        return None

    async def __call__(self, kind: str, value: float) -> str:
        problem = self.problem(kind, value)
        if problem is not None:
            return problem
        if value == self.value:
            return f"ok: phase {self.label} already runs at {amount(kind, value)}"
        try:
            await self.ctx.load.steer(kind, value)
        except LoadtowerError as exc:
            return f"not changed: {exc}"
        at = self.ctx.clock()
        change = {"phase": self.label, "kind": kind, "from": self.value, "to": value,
                  "at_s": round(at - self.started, 3)}
        self.changes.append(change)
        self.ctx.event(EVENT_KINDS[kind],
                       f"phase {self.label}: {kind} {amount(kind, self.value)} -> "
                       f"{amount(kind, value)} (steered by the operator)", data=change)
        self.value = value
        return f"ok: phase {self.label} now at {amount(kind, value)}"

    def result(self) -> dict[str, Any]:
        """What the phase's result says of its steering (nothing when it was not)."""
        if not self.changes:
            return {}
        path = " -> ".join([amount(self.kind, self.changes[0]["from"]),
                            *(f"{amount(self.kind, c['to'])} at {c['at_s']:.0f}s"
                              for c in self.changes)])
        return {"steered": self.changes,
                "notes": [f"{self.kind} steered live: {path}; its figures mix those levels"]}
