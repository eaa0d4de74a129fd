"""What phase handlers need in unit tests, without hosts or a database.

- ``ManualClock`` and ``InstantControl``: the run's clock, moved on by the phases' own
  sleeps, so a 20 s ramp step takes no time and every figure is exact.
- ``SyntheticLoad``: a Load whose agents "ran" as a function of the level asked (ops,
  latency, errors per second): on ``stop()`` it feeds the real ``LiveStats`` one
  agent-protocol interval line (real HDR histograms) per second it ran.
- ``ShellActions``: the inventory's actions run as real local shell commands (the
  Actions protocol, with CommandTimeout past the timeout), recording each call.
- ``phase_context``: a PhaseContext on a real store file.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loadtower.fleet.ssh_pool import CommandTimeout
from loadtower.orchestrator.context import PhaseContext
from loadtower.orchestrator.control import RunControl
from loadtower.orchestrator.live_stats import LiveStats, new_histogram
from loadtower.scenarios.plan import Plan, load_plan
from loadtower.store import StoreWriter

# one database host (an address nothing listens on) and one agent: enough for a plan
INVENTORY = """
[hosts.db1]
address = "127.0.0.250"
roles = ["db"]
engine = "cassandra"
[hosts.agent1]
address = "127.0.0.1"
roles = ["agent"]
"""


class ManualClock:
    def __init__(self, now: float = 1_000_000.25) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class InstantControl(RunControl):
    """RunControl whose sleeps move the manual clock instead of waiting."""

    def __init__(self, clock: ManualClock) -> None:
        super().__init__()
        self.clock = clock

    async def sleep(self, seconds: float) -> bool:
        if self.interrupted:
            return False
        self.clock.now += max(0.0, seconds)
        await asyncio.sleep(0)
        return True


# (ops that succeeded, their latency in microseconds, ops that failed) in one second
Second = tuple[int, int, int]


def interval_line(
    ts: int,
    op: str,
    ok: int,
    latency_us: int,
    errors: int,
    phase: str = "p",
    span: tuple[float, float] | None = None,
) -> dict[str, Any]:
    hist = new_histogram()
    if ok:
        hist.record_value(latency_us, ok)
    encoded = hist.encode().decode()
    line: dict[str, Any] = {
        "type": "interval",
        "agent": "agent1/0",
        "host": "agent1",
        "ts": ts,
        "phase": phase,
        "cpu_pct": 20.0,
        "ops": {
            op: {
                "ops": ok + errors,
                "errors": {"WriteTimeout": errors} if errors else {},
                "late": 0,
                "service_hist": encoded,
                "response_hist": encoded,
            }
        },
    }
    if span is not None:
        line["span"] = [span[0], span[1]]
    return line


@dataclass
class SyntheticLoad:
    stats: LiveStats
    clock: ManualClock
    # level (rate or users, 0 for a background load without either) and the second's
    # offset from the load's start -> what the agents did in that second
    second: Callable[[float, int], Second]
    starts: list[dict[str, Any]] = field(default_factory=list)
    steers: list[tuple[str, float, float]] = field(default_factory=list)
    _running: dict[str, Any] | None = None
    with_span: bool = True  # lines carry ``span`` (the agents' side of the phase rate)
    # lines of a phase that complete after it (a backlog): (seconds after its end, Second)
    late: list[tuple[int, Second]] = field(default_factory=list)
    sink: Callable[[dict[str, Any]], Any] | None = None  # where lines go (default: stats)

    async def start(self, phase: str, spec: dict[str, Any], **kw: Any) -> None:
        self._running = {"phase": phase, "at": self.clock(), **kw}
        self.starts.append(self._running)

    def _feed(self, line: dict[str, Any]) -> None:
        (self.sink or self.stats.add)(line)

    async def stop(self) -> None:
        """As the master's stop ack: every line of the phase (its backlog's too) is in.
        Each second's ops were scheduled in that second and completed by its end: the
        lines' spans cover [start, stop] exactly, so a phase of N s at L ops/s measures
        L ops/s."""
        run, self._running = self._running, None
        if run is None:
            return
        level = float(run.get("rate") or run.get("users") or 0)
        first = int(run["at"])
        end = int(self.clock())
        phase = str(run["phase"])
        now = self.clock()
        for offset, ts in enumerate(range(first, end)):
            ok, latency, errors = self.second(level, offset)
            done = now if ts == end - 1 else ts + 1.0  # the last second ends at the stop
            span = (max(float(ts), run["at"]), done) if self.with_span else None
            self._feed(interval_line(ts, "read", ok, latency, errors, phase, span))
        for after, (ok, latency, errors) in self.late:  # scheduled in the phase, done later
            ts = end + after
            span = (end - 0.5, ts + 0.5) if self.with_span else None
            self._feed(interval_line(ts, "read", ok, latency, errors, phase, span))

    async def steer(self, kind: str, value: float) -> None:
        """The running phase's rate or users, changed (recorded in `steers`)."""
        self.steers.append((kind, value, self.clock()))
        if self._running is not None:
            self._running[kind] = value

    async def wait_done(self, timeout: float | None = None) -> bool:
        """A load phase: it 'ran' for `records / level` s (1 s without a level)."""
        run = self._running
        if run is not None:
            records = int(run.get("records") or 0)
            level = float(run.get("concurrency") or 1) * 100.0  # ops/s of the synthetic load
            self.clock.now += max(1.0, records / level)
            await self.stop()
        return True


@dataclass
class ShellActions:
    """Runs a host's declared action as a local ``sh -c`` command."""

    plan: Plan
    calls: list[tuple[str, str, float | None]] = field(default_factory=list)

    async def run_action(
        self, name: str, action: str, *, timeout: float | None = None, **placeholders: str
    ) -> tuple[int, str, str]:
        self.calls.append((name, action, timeout))
        command = self.plan.inventory.hosts[name].actions[action].format(**placeholders)
        proc = await asyncio.create_subprocess_exec(
            "sh", "-c", command, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
        )
        try:
            out, err = await asyncio.wait_for(proc.communicate(), timeout)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)  # the command and what it started
            await proc.wait()
            raise CommandTimeout(
                f"host {name}: `{command}` did not finish within {timeout:g} s"
            ) from None
        return proc.returncode or 0, out.decode(), err.decode()


@contextlib.contextmanager
def phase_context(
    tmp_path: Path,
    scenario: str,
    inventory: str,
    second: Callable[[float, int], Second] = lambda level, offset: (0, 0, 0),
) -> Any:
    """(ctx, load, actions) for the scenario's phases; the store is closed afterwards and
    can then be read at ``tmp_path / "store.duckdb"``."""
    (tmp_path / "sc.toml").write_text(scenario)
    (tmp_path / "inv.toml").write_text(inventory)
    plan = load_plan(tmp_path / "sc.toml", tmp_path / "inv.toml")
    writer = StoreWriter(tmp_path / "store.duckdb")
    run_id = writer.start_run("t", plan.scenario.name, scenario, inventory, {}, {}, {})
    clock = ManualClock()
    stats = LiveStats()
    load = SyntheticLoad(stats, clock, second)
    actions = ShellActions(plan)
    ctx = PhaseContext(
        plan=plan,
        run_id=run_id,
        store=writer,
        load=load,
        actions=actions,
        control=InstantControl(clock),
        stats=stats,
        clock=clock,
        current_phase="p",
        db_hosts_up=list(plan.inventory.with_role("db")),
    )
    try:
        yield ctx, load, actions
    finally:
        writer.end_run(run_id, "completed", None)
        writer.close()
