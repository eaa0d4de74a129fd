"""What every phase handler gets: the plan, the store, the hosts, the load, the live stats."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, cast

from loadtower.fleet.dataset_upload import agent_spec
from loadtower.orchestrator.control import RunControl
from loadtower.orchestrator.live_stats import LiveStats, WindowSummary
from loadtower.protocol.phase_spec import DatasetSpec, PhaseSpec, TargetSpec, WorkloadSpec
from loadtower.scenarios.crossref import workload_of
from loadtower.scenarios.models import as_plain
from loadtower.scenarios.plan import Plan
from loadtower.scenarios.workloads.target_spec import phase_workload_file


class Load(Protocol):
    """Drives the load agents (see load_controller.LocustLoad)."""

    async def start(
        self,
        phase: str,
        spec: PhaseSpec,
        *,
        mode: str,
        rate: float | None = None,
        users: int | None = None,
        think_time: float = 0.0,
        duration: float | None = None,
        records: int | None = None,
        concurrency: int | None = None,
    ) -> None: ...

    async def stop(self) -> None: ...

    async def steer(self, kind: str, value: float) -> None: ...

    async def wait_done(self, timeout: float | None = None) -> bool: ...


class Actions(Protocol):
    """Runs an inventory-declared action on a host; returns (exit status, stdout, stderr).

    Raises fleet.ssh_pool.CommandTimeout when it runs longer than `timeout` seconds."""

    async def run_action(
        self, name: str, action: str, *, timeout: float | None = None, **placeholders: str
    ) -> tuple[int, str, str]: ...


TIMED_OUT = 124  # the exit status recorded for an action that ran out of time (as timeout(1))
LOG_LINES_PER_STREAM = 2000  # of one action's output; the rest is counted in one line
FAILURE_CHARS = 500  # of the failure message kept in the action's event


def failure_message(status: int, out: str, err: str) -> str:
    """What a failed action said: the last lines of its stderr (else stdout), at most
    FAILURE_CHARS characters; its exit status when it said nothing."""
    text = (err.strip() or out.strip())[-FAILURE_CHARS:]
    return text or f"exit status {status}, no output"


@dataclass
class PhaseContext:
    plan: Plan
    run_id: str
    store: Any  # loadtower.store.StoreWriter
    load: Load
    actions: Actions
    control: RunControl
    stats: LiveStats = field(default_factory=LiveStats)
    clock: Callable[[], float] = time.time
    current_phase: str = ""
    db_hosts_up: list[str] = field(default_factory=list)
    # a workload file's data set files: local path -> the path the agents read
    dataset_paths: dict[str, str] = field(default_factory=dict)
    # the phase's clock as its `phases` row keeps it: the runner sets the start; the end
    # is when the handler read its figures (``figures``), so that a phase whose lines
    # carry no span has the same duration live and stored
    phase_started: float = 0.0
    phase_ended: float | None = None

    def event(
        self, kind: str, message: str, host: str | None = None, data: dict | None = None
    ) -> None:
        self.store.event(
            self.run_id,
            self.clock(),
            kind,
            message,
            host=host,
            phase=self.current_phase or None,
            data=data,
        )

    def figures(self, start: float) -> WindowSummary:
        """The current phase's figures (its label's ops), to be read after the load's stop
        ack; ends the phase's clock. `start`: the handler's own start, for a context
        that no runner started."""
        self.phase_ended = self.clock()
        began = self.phase_started or start
        return self.stats.phase(self.current_phase, clock=(began, self.phase_ended))

    def spec(self, index: int) -> PhaseSpec:
        """What the agents need to generate load for phase `index`."""
        sc = self.plan.scenario
        name = workload_of(sc, index) or next(iter(sc.workloads))
        spec: PhaseSpec = {
            "engine": sc.engine,
            "target": cast(TargetSpec, as_plain(sc.target)),
            "dataset": cast(DatasetSpec, as_plain(sc.dataset)),
            "workload": cast(WorkloadSpec, as_plain(sc.workloads[name])),
            "workload_name": name,
        }
        workload_file = phase_workload_file(self.plan, name)  # rendered for this target
        if workload_file is not None:
            spec["workload_file"] = agent_spec(workload_file, self.dataset_paths)
        return spec

    def placeholders(self, host: str) -> dict[str, str]:
        sc = self.plan.scenario
        return {
            "address": self.plan.inventory.hosts[host].address,
            "host": host,
            "keyspace": sc.target.keyspace,
            "table": sc.target.table or "",
        }

    async def _run(
        self, host: str, action: str, timeout: float | None
    ) -> tuple[int, str, str]:
        # deferred: the SSH pool loads asyncssh; the phases' context does not need it
        from loadtower.fleet.ssh_pool import CommandTimeout

        try:
            return await self.actions.run_action(
                host, action, timeout=timeout, **self.placeholders(host)
            )
        except CommandTimeout as exc:  # the phase records it and goes on
            return TIMED_OUT, "", str(exc)

    def log_output(self, host: str, action: str, out: str, err: str) -> None:
        """An action's stdout and stderr, line by line, into the store's logs (streams
        ``action:NAME`` and ``action:NAME:stderr``)."""
        now = self.clock()
        for stream, text in ((f"action:{action}", out), (f"action:{action}:stderr", err)):
            lines = [line for line in text.splitlines() if line.strip()]
            for line in lines[:LOG_LINES_PER_STREAM]:
                self.store.log(self.run_id, now, host, stream, line)
            if len(lines) > LOG_LINES_PER_STREAM:
                more = len(lines) - LOG_LINES_PER_STREAM
                self.store.log(self.run_id, now, host, stream, f"... {more} more lines not kept")

    async def action(
        self, host: str, action: str, timeout: float | None = None
    ) -> tuple[int, str, str, float]:
        """Run a declared action (at most `timeout` seconds: then exit status TIMED_OUT),
        record it as events with its duration and its output in the logs."""
        start = self.clock()
        self.event("action", f"{action} on {host}: started", host=host, data={"action": action})
        status, out, err = await self._run(host, action, timeout)
        took = self.clock() - start
        self.log_output(host, action, out, err)
        data: dict[str, Any] = {
            "action": action,
            "exit_status": status,
            "duration_s": round(took, 3),
        }
        if status == 0:
            outcome = "done"
        else:
            data["error"] = failure_message(status, out, err)
            last = data["error"].splitlines()[-1]
            outcome = f"failed with exit status {status} ({last})"
        self.event("action", f"{action} on {host}: {outcome} in {took:.1f} s", host=host, data=data)
        return status, out, err, took

    async def action_quiet(
        self, host: str, action: str, timeout: float | None = None
    ) -> tuple[int, str, str, float]:
        """Run a declared action without recording an event (status polls); its output
        goes to the logs only when it fails."""
        start = self.clock()
        status, out, err = await self._run(host, action, timeout)
        if status != 0:
            self.log_output(host, action, out, err)
        return status, out, err, self.clock() - start

    async def background_load(self, index: int, phase: Any, duration: float | None = None) -> bool:
        """Start the phase's background load if it names a rate or users."""
        if getattr(phase, "rate", None) is None and getattr(phase, "users", None) is None:
            return False
        await self.load.start(
            self.current_phase,
            self.spec(index),
            mode="run",
            rate=phase.rate,
            users=phase.users,
            think_time=getattr(phase, "think_time", 0.0),
            duration=duration,
        )
        return True
