"""A run being written while the TUI watches it: a real StoreWriter appends one second
at a time (interval lines with real HDR histograms, agent and node samples), as a
headless `loadtower run` does, at the pace a test asks for."""

from __future__ import annotations

import random
from pathlib import Path

from hdrh.histogram import HdrHistogram

from loadtower.store import StoreWriter

LIVE_RUN = "20260921-171320-live"
START = 1_790_010_000  # 2026-09-21 16:00:00 UTC


def histogram(rng: random.Random, count: int, median_us: float) -> str:
    hist = HdrHistogram(1, 60_000_000, 3)
    for _ in range(count):
        hist.record_value(max(1, int(rng.lognormvariate(0, 0.5) * median_us)))
    return hist.encode().decode()


class LiveRun:
    """A running run in `store`; `second(ops=...)` appends and commits the next second."""

    def __init__(self, store: Path, agents: dict[str, str] | None = None,
                 errors: dict[str, int] | None = None, phase: str = "steady",
                 kind: str = "run", planned: float | None = None,
                 model: dict[str, float] | None = None) -> None:
        self.writer = StoreWriter(store, flush_every_s=3600)  # commits when told to
        self.rng = random.Random(5)
        self.agents = agents or {"loader1/0": "loader1"}  # agent -> host
        self.errors = errors or {}
        self.ts = START
        self.phase, self.index = phase, 0
        self.writer.start_run("live", "live", None, None, {}, {}, {}, run_id=LIVE_RUN,
                              started=START)
        # the orchestrator stores each phase's planned length with it (the live header's)
        # and a run phase's model ({"rate": 500} or {"users": 4}), as the plan has it
        params = {"type": kind} | ({} if planned is None else {"planned_s": planned,
                                                               "planned_exact": True})
        params |= model or {}
        self.writer.phase_started(LIVE_RUN, 0, phase, kind, START, params)
        self.writer.event(LIVE_RUN, START, "phase_start", f"phase {phase} ({kind}) started",
                          phase=phase)
        self.writer.flush()

    def next_phase(self, name: str, kind: str = "run",
                   model: dict[str, float] | None = None) -> None:
        """End the current phase now and start `name`."""
        self.writer.phase_ended(LIVE_RUN, self.index, self.ts, {})
        self.writer.event(LIVE_RUN, self.ts, "phase_end", f"phase {self.phase} ended",
                          phase=self.phase)
        self.index += 1
        self.phase = name
        self.writer.phase_started(LIVE_RUN, self.index, name, kind, self.ts,
                                  {"type": kind} | (model or {}))
        self.writer.event(LIVE_RUN, self.ts, "phase_start", f"phase {name} ({kind}) started",
                          phase=name)
        self.writer.flush()

    def second(self, ops: int, cpu: float = 30.0, label: str | None = None) -> int:
        """Write the next second: `ops` reads over the agents (the first one takes any
        rest), each agent at `cpu` % plus its index, under the current phase's label (or
        `label`: a ramp step's); returns the second's timestamp."""
        ts = self.ts
        share, rest = divmod(ops, len(self.agents))
        for index, (agent, host) in enumerate(self.agents.items()):
            n = share + (rest if index == 0 else 0)
            line = {"type": "interval", "agent": agent, "host": host, "ts": ts,
                    "phase": label or self.phase, "cpu_pct": cpu + index,
                    "ops": {"read": {"ops": n, "errors": dict(self.errors), "late": 0,
                                     "service_hist": histogram(self.rng, n, 800),
                                     "response_hist": histogram(self.rng, n, 900)}}}
            self.writer.add_interval(LIVE_RUN, line)
            self.writer.add_agent_sample(LIVE_RUN, ts, agent, host, cpu + index, float(n),
                                         "running")
        self.writer.add_node_sample(LIVE_RUN, ts, "db1", 40.0, 8e9, 24e9, 1e6, 5e7, 2e5, 1.8e5)
        self.writer.flush()
        self.ts += 1
        return ts

    def event(self, kind: str, message: str) -> None:
        self.writer.event(LIVE_RUN, self.ts, kind, message)
        self.writer.flush()

    def steered(self, kind: str, was: float, now: float, at: float | None = None) -> None:
        """The operator's change of the current phase's rate or users as the orchestrator
        stores it (steering.py): a rate_change / users_change event with its data."""
        ts = self.ts if at is None else at
        data = {"phase": self.phase, "kind": kind, "from": was, "to": now, "at_s": ts - START}
        self.writer.event(LIVE_RUN, ts, f"{kind}_change",
                          f"phase {self.phase}: {kind} {was:g} -> {now:g} (steered by the "
                          "operator)", phase=self.phase, data=data)
        self.writer.flush()

    def end(self, status: str = "completed", reason: str | None = None) -> None:
        self.writer.phase_ended(LIVE_RUN, self.index, self.ts, {})
        self.writer.event(LIVE_RUN, self.ts, "run", f"run {LIVE_RUN} ended: {status}")
        self.writer.end_run(LIVE_RUN, status, reason, ended=self.ts)
        self.writer.flush()

    def close(self) -> None:
        self.writer.close()
