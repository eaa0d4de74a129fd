"""The orchestrator: one run of a plan, from connecting hosts to the final status.

Every phase start/end and every action is an event in the store; every interval
line, node sample and agent sample is stored as it arrives. A run that fails keeps
every sample it took and ends with status `failed` and its reason.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loadtower.errors import LoadtowerError
from loadtower.fleet.agent_version import AgentVersions
from loadtower.fleet.cancel_tasks import bounded, cancel_and_wait
from loadtower.fleet.dataset_upload import ship_plan_datasets
from loadtower.fleet.facts import HOST_FACTS_CMD, local_versions, parse_host_facts
from loadtower.fleet.node_metrics import NodeMetricsSampler
from loadtower.orchestrator import run_versions
from loadtower.orchestrator.context import PhaseContext
from loadtower.orchestrator.control import ControlServer, RunControl, RunStopped
from loadtower.orchestrator.coordinators import PhaseCoordinators, line
from loadtower.orchestrator.load_controller import create_load
from loadtower.orchestrator.phases import HANDLERS
from loadtower.orchestrator.plan_duration import planned_seconds
from loadtower.orchestrator.secrets import known_secrets
from loadtower.orchestrator.sinks import Sinks
from loadtower.orchestrator.targets import check_passwords, db_hosts, phase_prefix
from loadtower.orchestrator.threshold_checks import ThresholdChecks
from loadtower.scenarios.control_api import control_path as default_control_path
from loadtower.scenarios.engine_hooks import hook
from loadtower.scenarios.models import as_plain
from loadtower.scenarios.plan import Plan

log = logging.getLogger("loadtower.run")
ABANDON_FLUSH_S = 2.0  # a second Ctrl-C waits this long at most for the store's last write


@dataclass
class RunOptions:
    store: Path
    accept_new_host_keys: bool = False
    control_path: Path | None = None
    name: str | None = None
    bootstrap_agents: bool = False
    metrics_url: str | None = None  # where the run's live figures are served (Prometheus)


@dataclass
class RunState:
    """What a display shows: read-only for observers."""

    run_id: str = ""
    phase: str = ""
    phase_index: int = -1
    step: int = -1  # the phase's place among all the run's phases (targets x phases)
    phase_started: float = 0.0
    started: float = field(default_factory=time.time)
    status: str = "starting"
    reason: str | None = None
    results: dict[str, Any] = field(default_factory=dict)
    breaches: list[str] = field(default_factory=list)  # one line per threshold breached


class Orchestrator:
    def __init__(self, plan: Plan, options: RunOptions) -> None:
        self.plan = plan
        self.options = options
        self.control = RunControl()
        self.state = RunState()
        self.sinks: Sinks | None = None
        self.open_phase: int | None = None  # the stored index of the phase under way
        self.load: Any = None  # the load (load_controller.LocustLoad) once it exists
        self.control_path: Path | None = None
        self.thresholds = ThresholdChecks(list(plan.scenario.thresholds))

    async def run(self) -> RunState:
        # deferred: the SSH pool loads asyncssh and the writer numba (the HDR kernels): the
        # run needs them, importing this module does not
        from loadtower.fleet.ssh_pool import HostPool
        from loadtower.store import StoreWriter

        plan = self.plan
        writer = StoreWriter(self.options.store)
        writer.secrets = known_secrets(plan)  # masked in everything the store gets
        run_id = writer.start_run(
            self.options.name or plan.scenario.name,
            plan.scenario.name,
            plan.scenario_text,
            plan.inventory_text,
            local_versions(),
            {},
            {"scenario_path": str(plan.scenario_path), "inventory_path": str(plan.inventory_path),
             "settings": as_plain(plan.scenario)},  # the scenario as it runs: run history
        )
        self.state.run_id = run_id
        self.state.status = "running"
        sinks = self.sinks = Sinks(writer, run_id, plan)
        control_path = self.options.control_path or default_control_path(self.options.store, run_id)
        server = ControlServer(self.control, control_path)
        self.control_path = control_path
        pool = HostPool(
            plan.inventory,
            accept_new_host_keys=self.options.accept_new_host_keys,
            on_state=sinks.host_state,
        )
        load = None
        metrics_task: asyncio.Task[None] | None = None
        unless_stopped = self.control.unless_stopped  # a stop while setting up ends it now
        try:
            await server.start()
            sinks.event("run", f"run {run_id} started: scenario {plan.scenario.name}")
            if self.options.metrics_url:
                sinks.event("metrics", f"live figures for Prometheus at {self.options.metrics_url}")
            await unless_stopped(pool.connect_all())
            await unless_stopped(self._host_facts(pool, sinks, writer, run_id))
            db_hosts_up = db_hosts(plan)
            metrics_task = asyncio.create_task(self._metrics(pool, sinks, db_hosts_up))
            pythons = await unless_stopped(AgentVersions(
                pool, plan.inventory, sinks, bootstrap=self.options.bootstrap_agents
            ).ensure())
            await unless_stopped(self._versions(pool, pythons, sinks, writer, run_id))
            dataset_paths = await unless_stopped(ship_plan_datasets(  # a workload file's data sets
                pool, plan.inventory, plan.workloads,
                lambda m, d: sinks.event("agents", m, data=d)))
            load = self.load = create_load(pool, plan, run_id, sinks, pythons)
            self.control.on_stop(load.interrupt)  # the operator's stop reaches the agents now
            load.on_master_lost = self.control.stop  # the run stops: no load without it
            await unless_stopped(load.prepare())
            ctx = PhaseContext(
                plan=plan,
                run_id=run_id,
                store=writer,
                load=load,
                actions=pool,
                control=self.control,
                stats=sinks.stats,
                db_hosts_up=db_hosts_up,
                dataset_paths=dataset_paths,
            )
            await self._phases(ctx, writer, sinks)
            if self.thresholds.aborted is not None or load.master_lost is not None:
                self.state.status, self.state.reason = "failed", self.control.reason
            elif self.control.stop_requested.is_set():
                self.state.status, self.state.reason = "interrupted", self.control.reason
            else:
                self.state.status = "completed"
        except LoadtowerError as exc:
            if load is not None and load.master_lost is not None:  # what the loss cut short
                self.state.status, self.state.reason = "failed", load.master_lost
            elif self.control.stop_requested.is_set():  # what the stop cut short, not a failure
                self.state.status, self.state.reason = "interrupted", self.control.reason
                if not isinstance(exc, RunStopped):
                    sinks.event("warning", f"while stopping: {exc}")
            else:
                self.state.status, self.state.reason = "failed", str(exc)
        except asyncio.CancelledError:
            self.state.status, self.state.reason = "interrupted", "cancelled"
        except Exception as exc:  # noqa: BLE001 - the run record must say why it failed
            self.state.status = "failed"
            self.state.reason = f"internal error: {type(exc).__name__}: {exc}"
            sinks.log("orchestrator", "stderr", traceback.format_exc())
        finally:
            ended_early = self.state.status == "interrupted"
            if ended_early:  # the store says so before the agents and links are closed
                self._end_run(writer, sinks, run_id)
            with contextlib.suppress(Exception):
                if load is not None:
                    await bounded(load.close(), timeout=30)
            await cancel_and_wait([metrics_task])
            with contextlib.suppress(Exception):
                await bounded(pool.close(), timeout=15)
            await server.close()
            if not ended_early:
                self._end_run(writer, sinks, run_id)
            with contextlib.suppress(LoadtowerError):
                writer.close()
        return self.state

    def _end_run(self, writer: Any, sinks: Sinks, run_id: str) -> None:
        sinks.event(
            "run",
            f"run {run_id} ended: {self.state.status}"
            + (f" ({self.state.reason})" if self.state.reason else ""),
        )
        try:
            writer.end_run(run_id, self.state.status, self.state.reason)
        except LoadtowerError as exc:  # the store's disk is full, say: samples kept so far
            self.state.status, self.state.reason = "failed", str(exc)

    async def _phases(self, ctx: PhaseContext, writer: Any, sinks: Sinks) -> None:
        """The phases in order; with ``[targets.*]`` once per target (``targets.py``)."""
        standby = {n for n, h in self.plan.inventory.hosts.items() if h.standby}
        targets = self.plan.target_plans()
        # a missing password fails now, not after the first target; every one is masked
        sinks.secrets += [pw for pw in check_passwords(targets) if pw not in sinks.secrets]
        count = len(self.plan.scenario.phases)
        for number, (target, plan) in enumerate(targets):
            ctx.plan = plan
            if target:
                sinks.event("target", f"target {target} ({plan.scenario.engine}) starts")
            before_target = hook(plan.scenario.engine, "before_target")
            if before_target is not None:  # pre-flight checks, what the timings mean
                await before_target(ctx)
            for index, phase in enumerate(plan.scenario.phases):
                if self.control.stop_requested.is_set():
                    return
                self.control.new_phase()
                label = phase_prefix(target) + plan.scenario.phase_label(index)
                ctx.current_phase = sinks.phase = label
                now = time.time()
                # the index within the target's phases: displays show 'phase i/n TARGET:NAME'
                self.state.phase, self.state.phase_index = label, index
                self.state.phase_started = now
                self.state.step = number * count + index
                planned, exact = planned_seconds(phase)  # the live header's phase length
                params = phase.model_dump(mode="json") | {
                    "engine": plan.scenario.engine, "planned_s": planned, "planned_exact": exact}
                if target:
                    params["target"] = target
                stored = number * count + index
                writer.phase_started(ctx.run_id, stored, label, phase.type, now, params)
                sinks.event("phase_start", f"phase {label} ({phase.type}) started")
                ctx.phase_started, ctx.phase_ended = now, None
                self.open_phase = stored
                coordinators = PhaseCoordinators(ctx.actions, plan, standby)
                try:
                    await coordinators.start()
                    watch = self.thresholds.live(ctx, label, plan.scenario.phase_label(index))
                    try:
                        result = await HANDLERS[phase.type](ctx, index, phase)
                    finally:
                        await self.thresholds.stop(watch)
                except BaseException as exc:  # the phase row ends too, with why
                    self.end_open_phase(writer, ctx.run_id, self._why_ended(exc))
                    raise
                stopped = self.control.stop_requested.is_set()
                if not stopped:  # a stopped run does not wait for the nodes' counts
                    await self._coordinators(coordinators, label, result, sinks)
                skipped = self.control.skip_requested.is_set()
                if skipped:
                    result["skipped"] = True
                if stopped:
                    result["interrupted"] = self.control.reason or "stopped"
                # the phase's clock ends where its figures were read (ctx.figures): a
                # phase without spans then has one duration live and stored
                ended = ctx.phase_ended if ctx.phase_ended is not None else time.time()
                verdicts = self.thresholds.phase_ended(
                    ctx, label, plan.scenario.phase_label(index), (now, ended))
                if verdicts:
                    result["thresholds"] = [v.line() for v in verdicts]
                self.state.breaches = [v.line() for v in self.thresholds.breaches]
                writer.phase_ended(ctx.run_id, stored, ended, result)
                self.open_phase = None
                self.state.results[label] = result
                sinks.event(
                    "phase_end",
                    f"phase {label} ended"
                    + (" (skipped)" if skipped else "")
                    + (f" ({result['interrupted']})" if stopped else ""),
                    data=result,
                )
                ctx.current_phase = sinks.phase = ""

    def abandon(self, reason: str, flush_s: float = ABANDON_FLUSH_S) -> str:
        """A second Ctrl-C: the process is about to exit at once (synchronous, quick).
        The load is told to stop (if the first stop was not sent yet), the phase under way
        and the run are ended `interrupted` in the store, and what the writer holds is
        flushed, waiting `flush_s` at most. Returns the line that says what the store
        kept."""
        if self.load is not None:
            with contextlib.suppress(Exception):
                self.load.interrupt()
        if self.control_path is not None:
            with contextlib.suppress(OSError):
                self.control_path.unlink()
        sinks, run_id = self.sinks, self.state.run_id
        self.state.status, self.state.reason = "interrupted", reason
        if sinks is None or not run_id:
            return "nothing was stored yet"
        writer = sinks.writer
        outcome: list[str] = []

        def end() -> None:
            try:
                sinks.event("run", f"run {run_id} ended: interrupted ({reason})")
                self.end_open_phase(writer, run_id, {"interrupted": reason})
                writer.end_run(run_id, "interrupted", reason)
                outcome.append(f"run {run_id} marked interrupted; every sample received "
                               "so far is stored (lines still on their way from the agents "
                               "are not)")
            except Exception as exc:  # noqa: BLE001 - said, and the process exits anyway
                outcome.append(f"run {run_id}: the store could not be written ({exc}); it "
                               "holds what its last write had")

        thread = threading.Thread(target=end, name="abandon", daemon=True)
        thread.start()
        thread.join(flush_s)
        if outcome:
            return outcome[0]
        return (f"run {run_id}: the store's last write did not finish within {flush_s:g} s; "
                "it holds what the write before had (about the last second is lost) and the "
                "next loadtower command marks the run interrupted")

    def _why_ended(self, exc: BaseException) -> dict[str, Any]:
        """The result of a phase whose handler raised: the stop's reason, or the error."""
        if self.control.stop_requested.is_set() or isinstance(exc, asyncio.CancelledError):
            return {"interrupted": self.control.reason or "cancelled"}
        return {"failed": str(exc) or type(exc).__name__}

    def end_open_phase(self, writer: Any, run_id: str, result: dict[str, Any]) -> None:
        """End the phase under way (if any) in the store, now, with `result`."""
        if self.open_phase is not None:
            writer.phase_ended(run_id, self.open_phase, time.time(), result)
            self.open_phase = None

    async def _coordinators(
        self, coordinators: Any, label: str, result: dict, sinks: Sinks
    ) -> None:
        """The phase's requests per coordinating node: in its result and a ``coordinators``
        event with data {host: requests} (coordinators.py)."""
        found = await coordinators.finish()
        if found is None:
            return
        counts, missing = found
        result["coordinators"] = counts
        if missing:
            result["coordinators_missing"] = missing
        sinks.event("coordinators", line(label, counts, missing), data=counts)

    async def _versions(
        self, pool: Any, pythons: dict[str, str], sinks: Sinks, writer: Any, run_id: str
    ) -> None:
        """The DB hosts' server versions and the agent hosts' drivers into runs.versions."""
        found = await run_versions.collect(pool, self.plan, db_hosts(self.plan), pythons)
        writer.set_versions(run_id, local_versions() | found)
        line, problems = run_versions.summary(found)
        sinks.event("versions", line, data=found)
        for host, problem in problems:
            sinks.event("warning", problem, host=host)

    async def _host_facts(self, pool: Any, sinks: Sinks, writer: Any, run_id: str) -> None:
        """Every running host's facts, asked of all hosts at once (one command each, each
        bounded): a host that does not answer has none."""
        names = [n for n, host in self.plan.inventory.hosts.items() if not host.standby]

        async def one(name: str) -> dict[str, Any] | None:
            with contextlib.suppress(Exception):
                status, out, _err = await pool.run(name, HOST_FACTS_CMD, timeout=15)
                if status == 0:
                    return parse_host_facts(out)
            return None

        found = await asyncio.gather(*(one(n) for n in names))
        facts = {n: f for n, f in zip(names, found, strict=True) if f is not None}
        writer.set_host_facts(run_id, facts)
        sinks.event("host_facts", f"facts of {len(facts)} hosts", data=facts)

    async def _metrics(self, pool: Any, sinks: Sinks, hosts: list[str]) -> None:
        """Node samples of the DB hosts that are up (a scaled-out host joins the list)."""
        sampler = NodeMetricsSampler(
            self.plan.inventory,
            pool,
            hosts=lambda: list(hosts),
            on_warning=lambda host, message: sinks.event("warning", message, host=host or None),
            on_note=lambda host, message: sinks.event("node_metrics", message, host=host),
        )
        engine_stats = self._engine_stats(pool, sinks, hosts)
        try:
            async for sample in sampler.samples():
                sinks.node_sample(sample)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - metrics loss must not end the run
            sinks.event("warning", f"node metrics stopped: {type(exc).__name__}: {exc}")
        finally:
            for task in engine_stats:
                task.cancel()
            with contextlib.suppress(BaseException):
                await asyncio.gather(*engine_stats, return_exceptions=True)
            with contextlib.suppress(Exception):
                await sampler.close()

    def _engine_stats(self, pool: Any, sinks: Sinks, hosts: list[str]) -> list[asyncio.Task]:
        """A task per DB host whose engine has its own figures (``engines.py``'s
        ``node_stats``, e.g. a server's own status command): rows of the store's ``node_stats``
        table beside the node samples, and one ``node_metrics`` event per host saying
        where they come from."""
        tasks = []
        told: set[str] = set()  # hosts whose node_metrics event is written
        interval = float(self.plan.inventory.metrics.interval)
        for host in hosts:
            node_stats = hook(self.plan.inventory.hosts[host].engine, "node_stats")
            if node_stats is None:
                continue

            engine = str(self.plan.inventory.hosts[host].engine)

            def emit(message: str, data: dict, host: str = host, engine: str = engine) -> None:
                if sinks.node_stats(host, engine, data) and host not in told:
                    told.add(host)
                    sinks.event("node_metrics", f"{host}: the database's own figures "
                                f"({engine} node_stats hook) go to the node_stats table; "
                                f"first reading: {message}", host=host)

            tasks.append(asyncio.create_task(
                _quietly(node_stats(pool, self.plan, host, emit, interval), sinks, host)))
        return tasks


async def _quietly(stats: Any, sinks: Sinks, host: str) -> None:
    """An engine's node stats until cancelled; a failure is one warning, not the run's."""
    try:
        await stats
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # noqa: BLE001 - metrics loss must not end the run
        sinks.event("warning", f"node stats of {host} stopped: {type(exc).__name__}: {exc}",
                    host=host)
