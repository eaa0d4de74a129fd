"""The driver loop: one native thread per agent process running an asyncio loop.

The database side is a backend chosen by the scenario's engine (``agents/backends.py``),
and for an engine with a native load core, that core's feed (``agents/native_feed.py``);
lanes, models and measurement here are the same for all.

Locust owns users, spawning and master/worker distribution; each Locust user only
registers a *lane* here and then idles. The lanes (open-model schedules, closed-model
loops, load inserters) run entirely on this loop, so the hot path (scheduling,
sending, timing, histogram recording) never costs a greenlet round trip per op.
"""

from __future__ import annotations

import asyncio
import contextlib
import queue
import random
import threading
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from loadtower.agents import precise_selector
from loadtower.agents.backends import Backend, backend_for
from loadtower.agents.inflight import DRAIN_TIMEOUT_S, DrainTimeout, InFlight
from loadtower.agents.lane_clock import lane_spin, wait_until
from loadtower.agents.measure import IntervalRecorder
from loadtower.agents.native_feed import NativeFeed, new_feed
from loadtower.agents.workload import dataset_feed
from loadtower.agents.workload.file_ops import FileOps, interleaved
from loadtower.agents.workload.generators import Context
from loadtower.agents.workload.keys import OpMix, load_slice
from loadtower.protocol.engine_kinds import default_engine, kind
from loadtower.protocol.phase_spec import PhaseSpec
from loadtower.protocol.workload_file_spec import WorkloadFileSpec

LATE_S = 0.002  # an op sent more than this after its intended start is counted late


@dataclass
class PhaseConfig:
    phase: str
    mode: str  # load | run
    spec: PhaseSpec
    contact_points: list[str]  # host or host:port
    port: int | None  # None: the engine's default
    username: str | None
    password: str | None
    driver: str
    worker_index: int = 0
    worker_count: int = 1
    lane_rate: float | None = None  # open model: ops/s per lane
    think_time: float = 0.0
    records: int = 0
    max_in_flight: int = 128
    seed: int | None = None

    @classmethod
    def from_message(cls, msg: Mapping[str, Any]) -> PhaseConfig:
        """The configuration a master's ``lt_phase`` message (a `PhaseMessage`) gives this
        worker, its secrets read back from their files (``password`` in place of
        ``password_ref``: protocol/link_secrets.py ``resolve_secrets``)."""
        fields = {k: v for k, v in msg.items() if k != "protocol"}
        return cls(**fields)


@dataclass
class PhaseDrive:
    """One configured phase in this process: its ops are recorded under `name` until
    its drain, which happens once (stop, the next configure, the load's end, shutdown)."""

    name: str
    drained: bool = False
    drain: asyncio.Future | None = field(default=None, repr=False)


@dataclass
class Lane:
    lane_id: int
    running: bool = True
    task: asyncio.Task | None = field(default=None, repr=False)
    stopped: asyncio.Event = field(default_factory=asyncio.Event, repr=False)

    def stop(self) -> None:
        self.running = False
        self.stopped.set()


class DriverLoop:
    def __init__(
        self, agent: str, host: str, out: Callable[[Mapping[str, Any]], None] | None = None
    ) -> None:
        self.recorder = IntervalRecorder(agent, host)
        # the agent's lines (protocol/lines.py forms) in order, for the worker to send
        self.out_queue: queue.Queue[Mapping[str, Any]] = queue.Queue()
        self.out: Callable[[Mapping[str, Any]], None] = out or self.out_queue.put
        self.loop = precise_selector.new_event_loop()  # waits that end on time
        self.thread = threading.Thread(target=self._run_loop, name="lt-engine", daemon=True)
        self.lanes: dict[int, Lane] = {}
        self.session: Any = None
        self.session_key: tuple | None = None
        self.backend: Backend | None = None
        self._advised: set[str] = set()
        self.config: PhaseConfig | None = None
        self.ready = asyncio.Event()
        self.ops: dict[str, Callable[[], Any]] = {}
        self.mix: OpMix | None = None
        self._load_next = 0
        self._load_end = 0
        self._load_lanes = 0
        self._load_rows = 1
        self._load_op = "insert"  # the load's op name, and one load op: (first key, rows)
        self._dataset_load: tuple[str, int, int] | None = None  # (data set, first, end)
        self._load_failed = 0  # rows of this phase's load ops that failed
        self._load_done_for: PhaseDrive | None = None  # the load on the core said load_done
        self._load_block: Callable[[int, int], Awaitable[Any]] = self._no_load
        self._slots: asyncio.Semaphore | None = None
        self._ticker: asyncio.Task | None = None
        self._tick_warned: set[str] = set()
        self.total_ops = 0
        self.run: PhaseDrive | None = None
        self.inflight = InFlight()
        # the engine's native load core's feed (its kind's `native_feed`: the Rust core),
        # made when a phase of such an engine is first configured; rust_on: this phase
        # runs on it
        self.rust: NativeFeed | None = None
        self.rust_on = False
        self._path_said: set[tuple[str, str]] = set()  # why the Rust core does not run, said once each

    # ---- thread plumbing (called from the Locust side) --------------------------------
    def start(self) -> None:
        self.thread.start()

    def _run_loop(self) -> None:
        asyncio.set_event_loop(self.loop)
        self._ticker = self.loop.create_task(self._tick())
        self.loop.run_forever()

    def call(self, coro: Any, timeout: float | None = None) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def submit(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    def add_lane(self, lane_id: int) -> None:
        self.loop.call_soon_threadsafe(self._add_lane, lane_id)

    def remove_lane(self, lane_id: int) -> None:
        self.loop.call_soon_threadsafe(self._remove_lane, lane_id)

    def stop_lanes(self) -> Any:
        """Stop the phase's load and drain it (a future: done once drained)."""
        return self.submit(self.drain())

    def shutdown(self, timeout: float = 20.0) -> None:
        with contextlib.suppress(Exception):
            self.call(self._close(), timeout)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(timeout)

    # ---- configuration ---------------------------------------------------------------
    async def configure(self, cfg: PhaseConfig) -> None:
        """Connect (once per target), create the schema (worker 0), prepare, build the ops."""
        self.ready.clear()
        await self.drain()  # the previous phase's ops end (or are given up) in that phase
        spec = cfg.spec
        backend = backend_for(spec.get("engine") or default_engine())
        key = backend.session_key(cfg)
        if self.session is None or self.session_key != key:
            if self.session is not None:
                await self.session.close()
                self.session = None
            self.session = await backend.open(cfg)
            self.session_key = key
        self.backend = backend
        self._dataset_load, self._load_failed = None, 0
        workload_file = spec.get("workload_file")
        if workload_file:  # every workload, built-ins too: their shipped files
            await self._configure_file(cfg, backend, workload_file)
        else:
            raise ValueError("the phase spec has no workload_file (built-in workloads come "
                             "as their shipped workload files: is the orchestrator older "
                             "than this agent?)")
        self.begin_phase(cfg)

    async def _configure_file(self, cfg: PhaseConfig, backend: Backend,
                              wf: WorkloadFileSpec) -> None:
        """A workload file's phase (``agents/workload/file_ops.py``): worker 0 runs the
        target's DDL, the statements are prepared, rows come from the reference binder
        (one Context per agent, seeded from the phase's seed)."""
        if cfg.worker_index == 0:
            await self.session.ddl(list(wf["ddl"]))
        rng = random.Random(cfg.seed)
        records = int(cfg.records or cfg.spec["dataset"]["records"])
        first = int(cfg.spec.get("start_key") or 0) if cfg.mode == "load" else 0
        # a load of a data set: its rows are the load's keys (agents/workload/dataset_feed.py)
        loaded = dataset_feed.load_dataset(wf) if cfg.mode == "load" else None
        if loaded is not None:
            first, records = 0, dataset_feed.dataset_rows(wf, loaded)
        self._load_next, self._load_end = load_slice(
            first, records, cfg.worker_index, cfg.worker_count
        )
        self._dataset_load = (
            (loaded, self._load_next, self._load_end) if loaded is not None else None)
        datasets = dataset_feed.worker_datasets(
            wf, cfg.worker_index, cfg.worker_count,
            (loaded, self._load_next, self._load_end) if loaded is not None else None)
        if cfg.mode == "run":  # new keys past the data set, the workers' interleaved
            wf = interleaved(wf, records, cfg.worker_index, max(1, cfg.worker_count))
        ops = FileOps(wf, backend.file_runner(self.session, wf),
                      Context(rng, records, datasets=datasets))
        self.ops, self.mix = ops.table(), OpMix(ops.weights(), rng)
        if cfg.mode == "load":
            if ops.load_op is None or ops.load_op not in wf["run"]:
                raise ValueError("the workload file has no load op on this target (load = ...)")
            self._load_rows = ops.load_rows(backend.load_rows(cfg))
            self._load_op, self._load_block = ops.load_op, ops.load
        self.rust_on = self._rust_wanted(cfg, backend.engine)
        if self.rust_on:  # the core binds the rows (its binder in Rust) and sends them
            load = ((str(ops.load_op), self._load_next, self._load_end, self._load_rows)
                    if cfg.mode == "load" else None)
            await self._core().configure_file(cfg, backend.session_key(cfg), wf, records, load)
            return
        await ops.runner.prepare(ops.statements())
        feed = self._feed(backend.engine)
        if feed is not None and feed.asked(cfg) and feed.available():
            feed.connect_early(cfg, backend.session_key(cfg))  # for the run phases to come

    def _feed(self, engine: str) -> NativeFeed | None:
        """The native feed of `engine`, made once per process (None: its kind has none)."""
        if self.rust is None:
            self.rust = new_feed(engine, self.recorder, self._warn, self.out)
        return self.rust if kind(engine).native_feed is not None else None

    def _core(self) -> NativeFeed:
        """The feed of a phase that runs on the native core (rust_on)."""
        if self.rust is None:
            raise RuntimeError("the phase runs on the native core but no feed was made")
        return self.rust

    def _rust_wanted(self, cfg: PhaseConfig, engine: str) -> bool:
        """A workload file's phase (the built-ins are files too) on a target whose engine
        has a native core, asking for it: open-model and closed-model run phases and load
        phases, bound by the core's binder. Any other such phase runs on the lanes' Python loop over the
        phase's session driver, and an event of the feed's `path_event` kind says so and why
        (once per reason)."""
        wf = cfg.spec.get("workload_file")
        feed = self._feed(engine)
        if feed is None or not wf:
            return False
        asked = feed.asked(cfg)
        why = feed.why_not_file(cfg, engine, wf) if asked else None
        if asked and why is None:
            return True
        driver = getattr(self.session, "name", "") or cfg.driver
        said = f"native_io rust: {why}" if asked else "native_io python"
        what = ("the load's inserts" if cfg.mode == "load"
                else "open-model sends" if cfg.lane_rate else "closed-model sends")
        line = f"{said}; {what} run from Python on {driver}"
        if (cfg.phase, line) not in self._path_said:  # once per phase and reason
            self._path_said.add((cfg.phase, line))
            self.out({"type": "event", "kind": feed.path_event, "ts": time.time(),
                      "phase": cfg.phase, "message": line})
        return False

    def begin_phase(self, cfg: PhaseConfig) -> None:
        """The phase is prepared (its ops and mix are set): from now on lanes run its ops,
        recorded under its name. Called on the engine's loop, after the previous drain."""
        self._slots = asyncio.Semaphore(cfg.max_in_flight)
        self.config = cfg
        self.run = PhaseDrive(cfg.phase)
        self.recorder.phase = cfg.phase
        if self.rust is not None:
            self.rust.phase = cfg.phase
        self.recorder.mark()
        self._load_lanes = 0
        self._advised.clear()
        self.ready.set()

    @staticmethod
    async def _no_load(first: int, count: int) -> None:
        raise RuntimeError("no load configured")

    # ---- lanes -----------------------------------------------------------------------
    def _add_lane(self, lane_id: int) -> None:
        lane = Lane(lane_id)
        self.lanes[lane_id] = lane
        lane.task = self.loop.create_task(self._lane(lane))

    def _remove_lane(self, lane_id: int) -> None:
        lane = self.lanes.pop(lane_id, None)
        if lane is not None:
            lane.stop()

    def _stop_all(self) -> None:
        for lane in self.lanes.values():
            lane.stop()
        self.lanes.clear()

    async def _lane(self, lane: Lane) -> None:
        await self.ready.wait()
        cfg, run = self.config, self.run
        assert cfg is not None
        if run is None or run.drained or not lane.running:
            return  # a user that arrived after its phase was stopped: no op of it counts
        try:
            if cfg.mode == "load" and self.rust_on:
                await self._core_load_lane(lane, run)
            elif cfg.mode == "load":
                await self._load_lane(lane, run)
            elif cfg.lane_rate and self.rust_on:
                await self._core().lane(lane.stopped, cfg.lane_rate)
            elif cfg.lane_rate:
                await self._open_lane(lane, run.name, cfg.lane_rate)
            elif self.rust_on:
                await self._core().closed_lane(lane.stopped)
            else:
                await self._closed_lane(lane, run.name, cfg.think_time)
        except Exception as exc:  # noqa: BLE001 - a lane must never die silently
            self.out(
                {
                    "type": "event",
                    "kind": "warning",
                    "ts": time.time(),
                    "message": f"lane {lane.lane_id} stopped: {type(exc).__name__}: {exc}",
                }
            )

    def _failed(self, phase: str, op: str, exc: BaseException, late: bool, intended: float,
                done: float, sent: float | None = None) -> None:
        name = type(exc).__name__
        self.recorder.error(phase, op, name, late, intended, done, sent)
        if name not in self._advised and self.backend is not None:
            advice = self.backend.advice(exc)
            if advice:  # once per error class and phase: what to change on the server
                self._advised.add(name)
                self._warn(advice)

    def _warn(self, message: str) -> None:
        self._event("warning", message)

    def _event(self, kind: str, message: str) -> None:
        self.out({"type": "event", "kind": kind, "ts": time.time(), "message": message})

    async def _timed(self, phase: str, op: str, intended: float, late: bool,
                     open_model: bool = False) -> None:
        """One op of `phase` (the phase it was scheduled in), counted in that phase and
        in the second it completes in, unless its phase's drain gave up on it.
        `open_model`: its send - intended start is its lateness (a closed op's intended
        start is its send)."""
        ticket = self.inflight.begin(phase, op, intended, late)
        sent = time.monotonic()
        try:
            await self.ops[op]()
        except Exception as exc:  # noqa: BLE001 - every failure is counted by class
            if self.inflight.end(ticket):
                self._failed(phase, op, exc, late, intended, time.monotonic(),
                             sent if open_model else None)
        else:
            if self.inflight.end(ticket):
                self.recorder.ok(phase, op, intended, sent, time.monotonic(), late, open_model)
        finally:
            self.total_ops += 1

    async def set_lane_rate(self, phase: str, lane_rate: float) -> None:
        """The running open-model phase's new rate per lane (the operator steered it):
        every lane's schedule goes on from its next intended start at the new interval,
        so no intended op is dropped or counted twice. Another phase's (one this process
        has drained already) is ignored."""
        cfg = self.config
        if cfg is None or cfg.phase != phase or not cfg.lane_rate or lane_rate <= 0:
            return
        if self.run is None or self.run.drained:
            return
        cfg.lane_rate = lane_rate
        if self.rust_on:
            self._core().set_lane_rate(lane_rate)

    async def _open_lane(self, lane: Lane, phase: str, rate: float) -> None:
        cfg = self.config
        assert cfg is not None
        interval = 1.0 / rate
        slots = self._slots
        assert slots is not None and self.mix is not None
        spin = lane_spin(interval)
        next_t = time.monotonic() + random.random() * interval
        choose = self.mix.next
        while lane.running:
            if cfg.lane_rate and cfg.lane_rate != rate:  # steered: the next op on
                rate = cfg.lane_rate
                interval = 1.0 / rate
                spin = lane_spin(interval)
            if next_t > time.monotonic():
                await wait_until(next_t, spin)
                if not lane.running:
                    break
            await slots.acquire()
            if not lane.running:
                slots.release()
                break
            late = time.monotonic() - next_t > LATE_S
            task = self.loop.create_task(self._timed(phase, choose(), next_t, late, True))
            task.add_done_callback(lambda _t: slots.release())
            next_t += interval

    async def _closed_lane(self, lane: Lane, phase: str, think: float) -> None:
        assert self.mix is not None
        choose = self.mix.next
        while lane.running:
            await self._timed(phase, choose(), time.monotonic(), False)
            if think > 0:
                await asyncio.sleep(think)

    async def _load_lane(self, lane: Lane, run: PhaseDrive) -> None:
        self._load_lanes += 1
        rows = self._load_rows  # 1: one insert per record; n: blocks of n rows (block_load)
        op, phase, inflight = self._load_op, run.name, self.inflight
        block = self._load_block
        try:
            while lane.running and self._load_next < self._load_end:
                k = self._load_next
                count = min(rows, self._load_end - k)
                self._load_next += count
                sent = time.monotonic()  # a load op's intended start is its send
                ticket = inflight.begin(phase, op, sent, False)
                try:
                    await block(k, count)
                except Exception as exc:  # noqa: BLE001
                    self._load_failed += count
                    if inflight.end(ticket):
                        self._failed(phase, op, exc, False, sent, time.monotonic())
                else:
                    if inflight.end(ticket):
                        self.recorder.ok(phase, op, sent, sent, time.monotonic(), False)
        finally:
            self._load_lanes -= 1
        if self._load_lanes == 0 and self._load_next >= self._load_end and run is self.run:
            if self._dataset_load is not None:  # a data set's load: what this worker wrote
                name, first, end = self._dataset_load
                failed = self._load_failed
                self._event("dataset", f"data set {name}: rows {first + 1}..{end} loaded "
                            f"({end - first - failed} rows)"
                            + (f", {failed} rows failed" if failed else "")
                            + f"; worker peak RSS {dataset_feed.peak_rss_mb():.0f} MB")
            # drained first: every line of the load and the drain event go out before
            # load_done, since the orchestrator counts the load when the phase is done
            await self.drain()
            self.out({"type": "load_done", "ts": time.time()})

    async def _core_load_lane(self, lane: Lane, run: PhaseDrive) -> None:
        """A load lane on the Rust core: one more of its loops over the worker's slice;
        the lane that sees the slice done says how many rows failed, drains and sends
        load_done, as the Python path does."""
        done = await self._core().load_lane(lane.stopped)
        if done and run is self.run and self._load_done_for is not run:
            self._load_done_for = run  # once: the other lanes see it too
            self._load_failed = self._core().load_failed()
            if self._load_failed:
                self._warn(f"phase {run.name}: {self._load_failed} of "
                           f"{self._load_end - self._load_next} rows of the load failed")
            self._load_next = self._load_end
            await self.drain()
            self.out({"type": "load_done", "ts": time.time()})

    # ---- phase end -----------------------------------------------------------------------
    async def drain(self, bound: float = DRAIN_TIMEOUT_S) -> None:
        """Stop the configured phase's load and drain it, once, waiting up to `bound`
        seconds for its ops in flight; callers that come while it drains (stop, then the
        next configure) wait for the same drain."""
        run = self.run
        if run is None:
            self._stop_all()
            if self.rust is not None:
                await self.rust.idle()
            return
        if run.drain is None:
            run.drained = True
            self._stop_all()  # no lane schedules another op from here on
            run.drain = asyncio.ensure_future(self._drain(run, bound))
        await asyncio.shield(run.drain)

    async def stop_phase(self, stop_id: Any = None, drain_s: float | None = None) -> None:
        """The master's stop: drain (up to `drain_s` seconds, an operator's stop: else
        DRAIN_TIMEOUT_S), then say so through the same line queue, so that the master
        reads `stop_done` after every line of the phase and the drain event."""
        bound = DRAIN_TIMEOUT_S if drain_s is None else max(0.0, min(drain_s, DRAIN_TIMEOUT_S))
        try:
            await self.drain(bound)
        finally:
            self.out({"type": "stop_done", "id": stop_id, "ts": time.time()})

    async def _drain(self, run: PhaseDrive, bound: float = DRAIN_TIMEOUT_S) -> None:
        """Wait for the phase's ops in flight (up to `bound` seconds), count those still
        out as `DrainTimeout` errors of the phase, send every remaining line of the phase,
        then the drain event."""
        self._stop_all()
        started = time.monotonic()
        deadline = started + bound
        waiting = self.inflight.count(run.name)
        abandoned = 0
        feed = self.rust
        if feed is not None:
            feed.phase_counts = None
        # nothing here may raise: a drain that failed would fail every later configure
        # (they await the same drain), and the phase's lines and event go out anyway
        try:
            waiting += feed.in_flight() if feed is not None else 0
            await self.inflight.wait(run.name, bound)
        except Exception as exc:  # noqa: BLE001
            self._warn(f"phase {run.name}: waiting for its ops: {type(exc).__name__}: {exc}")
        try:
            abandoned += await feed.drain(deadline) if feed is not None else 0
        except Exception as exc:  # noqa: BLE001
            self._warn(f"phase {run.name}: stopping the Rust core: {type(exc).__name__}: {exc}")
        done = time.monotonic()
        for ticket in self.inflight.abandon(run.name):
            self.recorder.error(run.name, ticket.op, DrainTimeout.__name__, ticket.late,
                                ticket.intended, done)
            abandoned += 1
        for line in self.recorder.flush(run.name):
            self.out(line)
        drain_s = round(done - started, 3)
        self.out(
            {
                "type": "event",
                "kind": "drain",
                "ts": time.time(),
                "phase": run.name,
                "message": f"phase {run.name}: waited {drain_s:.2f} s for {waiting} in-flight ops"
                f" ({abandoned} did not finish)",
                "data": {"phase": run.name, "waited_ops": waiting, "drain_s": drain_s,
                         "abandoned": abandoned,
                         # the Rust core's ops of the phase: intended = counted + abandoned
                         **({"core": feed.phase_counts}
                            if self.rust_on and feed is not None and feed.phase_counts
                            else {})},
            }
        )

    # ---- the per-second ticker ---------------------------------------------------------
    async def _tick(self) -> None:
        """Every second, the lines of every second that is over. An op counts in the
        second it completed in (the recorder keys it so): a late tick changes when a line
        goes out, never which second an op is in."""
        while True:
            now = time.time()
            # a few ms past the second: the Rust core's last ops of it are recorded
            await asyncio.sleep(int(now) + 1 - now + 0.005)
            before = int(time.time())
            try:
                if self.rust is not None:
                    self.rust.harvest(before - 1)
            except Exception as exc:  # noqa: BLE001 - the Python side's lines go out anyway
                self._tick_failed("reading the Rust core's ops", exc)
            run = self.run
            alive = bool(self.lanes) and run is not None and not run.drained
            try:
                for line in self.recorder.finished(before, keep_alive=alive):
                    self.out(line)
            except Exception as exc:  # noqa: BLE001 - the ticker lives on: later seconds
                self._tick_failed("sending a second's lines", exc)

    def _tick_failed(self, doing: str, exc: Exception) -> None:
        """One warning per distinct failure of the ticker (not one every second)."""
        message = f"per-second lines: {doing}: {type(exc).__name__}: {exc}"
        if message not in self._tick_warned:
            self._tick_warned.add(message)
            self._warn(message)

    async def _close(self) -> None:
        with contextlib.suppress(Exception):
            await self.drain()
        if self._ticker is not None:
            self._ticker.cancel()
        await asyncio.sleep(0)
        if self.rust is not None:
            await self.rust.close()
        for line in self.recorder.finished(2**62):  # phases that never drained (none)
            self.out(line)
        if self.session is not None:
            await self.session.close()
            self.session = None
