"""CQL phases on the Rust load core (``native_io = "rust"``, the default): open-model
run phases, and for workload files also load phases and closed-model run phases.

`loadtower_core` (engines/cassandra/native: ScyllaDB's Rust driver under PyO3) owns the hot
loop: the schedule of intended start times, keys and values, sending through the driver
(token-aware, TLS, local DC, re-prepare), per-node in-flight slots (a hung node's ops
wait for ITS slots and time out; the other nodes' ops keep their rate), timing and
per-second HDR histograms. Each Locust user's lane only adds its rate; Python harvests
finished seconds once a second into the engine's recorder.

Every workload arrives as a workload file (the built-ins as their shipped files), and its
phases run on the core (``configure_file``): the core's binder
(engines/cassandra/native/src/{binder,generators}.rs) makes the rows from the phase spec's
bindings and sends the statements the orchestrator rendered. Open model: each lane adds
its rate. Closed model (``closed_lane``): each lane is one of the core's loops (op, then
think time, intended = sent). Load (``load_lane``): each lane is one more loop over the
worker's slice of key numbers (engines/cassandra/native/src/closed.rs), the load op's rows
per op; True once every key is recorded, ``load_failed()`` counts the rows that failed.

When the core is not installed, or the phase asks for something it does not bind (a
workload file binding a data set), the engine's Python lanes run the phase over its
session driver and a ``cql_path`` event says why. At configure a ``cql_path`` event
carries ``Core.path()`` (driver, version, protocol, TLS, local DC, per-node limit) as
its data.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import json
import os
import random
import time
from collections.abc import Callable, Mapping
from typing import Any

from loadtower.agents.backends import prepare_retrying
from loadtower.agents.measure import IntervalRecorder
from loadtower.agents.tls import TlsHandshakeError, TlsOptions, split_point
from loadtower.agents.workload.file_ops import statement_name
from loadtower.engines.cassandra import CASSANDRA
from loadtower.engines.cassandra.agent.schemas import cql_name
from loadtower.protocol.engine_kinds import titles, with_capability

STOP_TIMEOUT_S = 30.0  # lanes gone without a drain: how long the core waits for its ops
CONNECT_TIMEOUT_MS = 10_000
REQUEST_TIMEOUT_MS = 12_000
PREPARE_TIMEOUT_S = 30.0  # per attempt, and for the attempts in all
HANDSHAKE_FAILED = ": TLS handshake failed: "  # the core's line for a refused handshake
WATCH_S = 0.05  # how often the feed looks whether its lanes are gone
# the core's tokio worker threads (the driver's I/O and the ops' tasks; the schedule is one
# of them): 1 measured best on a 2-core load host (docs/agent-protocol.md: 20.8 vs 28.1 us/op
# at 5,000 ops/s, 60 vs 73 at 1,000)
CORE_THREADS = int(os.environ.get("LOADTOWER_CORE_THREADS", "1"))


def core_module() -> Any:
    """The compiled core, or None when it is not installed here."""
    try:  # by name: built by maturin (scripts/build_core.sh), absent where cargo was
        return importlib.import_module("loadtower_core")
    except ImportError:
        return None


def available() -> bool:
    return core_module() is not None


def asked(cfg: Any) -> bool:
    """The target asks for the Rust core (``native_io`` "rust", the default)."""
    return str(cfg.spec["target"].get("native_io") or "rust") == "rust"


def file_json(spec: Mapping[str, Any]) -> str:
    """What the core binds of a workload file's phase spec: its ops' bindings and what
    runs on the target (the rendered statements; docs/workloads.md)."""
    return json.dumps({"ops": spec.get("ops", {}), "run": spec.get("run", {})})


def file_statements(spec: Mapping[str, Any]) -> dict[str, str]:
    """Every statement of the file's run ops, by the name the core sends it under
    (``OP/I``, as file_ops.statement_name)."""
    return {statement_name(op, i): s["text"] for op, run in spec.get("run", {}).items()
            for i, s in enumerate(run.get("statements", []))}


def why_not_file(cfg: Any, engine: str, spec: Mapping[str, Any]) -> str | None:
    """Why a workload file's phase (load, open or closed model) cannot run on the core
    (None: it can): another engine, no core here, or a generator / feature its binder
    lacks (named; e.g. a data set, whose loads and draws stay on the Python path)."""
    if engine not in with_capability(rust_core=True):
        return f"the Rust core drives {titles(with_capability(rust_core=True))} only, not {engine}"
    module = core_module()
    if module is None:
        return "loadtower_core is not installed here (no cargo when loadtower was installed?)"
    why = module.Core.file_unsupported(file_json(spec))
    return f"the Rust core does not bind this workload file: {why}" if why else None


def tls_dict(cfg: Any) -> dict[str, Any] | None:
    options = TlsOptions.from_spec((cfg.spec.get("connection") or {}).get("tls"))
    if options is None:
        return None
    return {"ca_pem": options.ca_pem, "cert_pem": options.cert_pem, "key_pem": options.key_pem,
            "verify_hostname": options.verify_hostname}


def handshake_line(message: str, connection: Mapping[str, Any]) -> str | None:
    """The core's one line for a failed TLS handshake (``ADDRESS:PORT: TLS handshake
    failed: WHY``) as the agent's probe says it, with the node's inventory name and the CA
    file (``db1 198.18.0.11:9042: TLS handshake failed: WHY (CA /path/ca.pem)``); None for
    any other connect error."""
    where, sep, why = message.partition(HANDSHAKE_FAILED)
    if not sep or " " in where:
        return None
    address = split_point(where, 0)[0]
    label = (connection.get("names") or {}).get(address, "")
    ca_file = str((connection.get("tls") or {}).get("ca_file") or "")
    name = f"{label} {where}" if label and label != address else where
    return f"{name}{HANDSHAKE_FAILED}{why}" + (f" (CA {ca_file})" if ca_file else "")


def metadata_name(name: str) -> str:
    """A keyspace or table name as the driver's schema metadata spells it."""
    quoted = cql_name(name)
    return quoted[1:-1].replace('""', '"') if quoted.startswith('"') else quoted.lower()


class RustFeed:
    """The engine's open-model feed (connect_early, configure_file, lane, idle, in_flight,
    drain, harvest, close, phase) over one `loadtower_core.Core` per agent process."""

    # the event that says which path a phase's sends take (its kind's)
    path_event = CASSANDRA.path_event or ""

    def __init__(self, recorder: IntervalRecorder, warn: Callable[[str], None],
                 out: Callable[[Mapping[str, Any]], None]) -> None:
        self.recorder, self.warn, self.out = recorder, warn, out
        self.phase = ""
        self.stop_timeout: float | None = None
        self.core: Any = None
        self.core_key: tuple | None = None
        self.lane_rate = 0.0  # open model: the core's rate is lanes x lane_rate
        self.lanes = 0
        self.mode = "open"  # open | closed | load: how lanes feed the core this phase
        self.think = 0.0
        # the load (op, first key, end, rows per op) until its first lane starts it
        self._load: tuple[str, int, int, int] | None = None
        self.abandoned = 0
        self.counted_from = (0, 0)  # the core's (intended, counted) when the phase began
        self.phase_counts: dict[str, int] | None = None  # the last drained phase's
        self._task: asyncio.Task | None = None
        self._connecting: asyncio.Task | None = None
        self._connecting_key: tuple | None = None

    # -- what the driver loop asks first (agents/native_feed.py, NativeFeed) -----------------
    def asked(self, cfg: Any) -> bool:
        return asked(cfg)

    def available(self) -> bool:
        return available()

    def why_not_file(self, cfg: Any, engine: str, spec: Mapping[str, Any]) -> str | None:
        return why_not_file(cfg, engine, spec)

    # -- connecting and configuring -------------------------------------------------------
    def connect_early(self, cfg: Any, key: tuple) -> None:
        """Connect in the background (from any CQL phase, e.g. the load), so that the first
        run phase does not wait for it."""
        if self._connecting is None or self._connecting_key != key:
            task = asyncio.get_running_loop().create_task(self._connect(cfg, key))
            task.add_done_callback(lambda t: t.cancelled() or t.exception())  # read later
            self._connecting, self._connecting_key = task, key

    async def _connect(self, cfg: Any, key: tuple) -> None:
        await self.idle()
        if self.core is not None and self.core_key == key:
            return
        await self._close_core()
        module = core_module()
        assert module is not None
        core = module.Core(CORE_THREADS)
        target = cfg.spec["target"]
        try:
            await asyncio.to_thread(
                core.connect, list(cfg.contact_points), int(cfg.port or 9042), cfg.username,
                cfg.password, str(target["consistency"]), tls_dict(cfg), target.get("local_dc"),
                REQUEST_TIMEOUT_MS, CONNECT_TIMEOUT_MS)
        except ConnectionError as exc:
            line = handshake_line(str(exc), cfg.spec.get("connection") or {})
            if line is None:
                raise
            raise TlsHandshakeError(line) from None
        self.core, self.core_key = core, key

    async def _connected(self, cfg: Any, key: tuple) -> Any:
        """The core, connected to the target of `key`, with no phase running."""
        self.connect_early(cfg, key)
        assert self._connecting is not None
        try:
            await self._connecting
        except Exception:  # noqa: BLE001 - e.g. a node down during the load: try once more
            self._connecting = None
            self.connect_early(cfg, key)
            assert self._connecting is not None
            await self._connecting
        await self.idle()
        assert self.core is not None
        return self.core

    def _configured(self, cfg: Any, core: Any,
                    load: tuple[str, int, int, int] | None = None) -> None:
        """The phase is set on the core: count from here, say what sends (cql_path, its
        data naming the mode: open, closed or load)."""
        self.counted_from = tuple(core.counts())
        self._load = load
        self.mode = "load" if load is not None else "open" if cfg.lane_rate else "closed"
        self.think = float(cfg.think_time or 0.0)
        path = {**dict(core.path()), "mode": self.mode}
        self.out({"type": "event", "kind": self.path_event, "ts": time.time(), "phase": cfg.phase,
                  "message": _path_line(path), "data": path})

    async def configure_file(self, cfg: Any, key: tuple, spec: Mapping[str, Any],
                             records: int,
                             load: tuple[str, int, int, int] | None = None) -> None:
        """A workload file's phase on the core: connect (once per target), prepare its
        statements, hand the core its bindings (the binder in Rust); `load`: a load
        phase's (load op, first key number, end, rows per op), else a run phase."""
        core = await self._connected(cfg, key)
        await prepare(core, file_statements(spec))
        seed = cfg.seed if cfg.seed is not None else random.getrandbits(63)
        tables = list(spec.get("tables") or [])
        keyspace, _, table = (tables[0] if tables else ".").partition(".")
        core.configure_file(
            file_json(spec), int(seed) & ((1 << 63) - 1), int(records), int(cfg.max_in_flight), metadata_name(keyspace or cfg.spec["target"]["keyspace"]),
            metadata_name(table or "t"))
        self._configured(cfg, core, load)

    # -- lanes ------------------------------------------------------------------------------
    async def lane(self, stopped: asyncio.Event, rate: float) -> None:
        """An open-model lane's life on this path: its rate joins the core's schedule
        until it stops (the core's rate: lanes x the rate per lane)."""
        self.lane_rate = rate
        self._join(self._start_open, self._set_rate)
        try:
            await stopped.wait()
        finally:
            self._leave(self._set_rate)

    def set_lane_rate(self, rate: float) -> None:
        """The operator steered the phase: the core's schedule goes on at lanes x `rate`
        from its next intended start (engines/cassandra/native/src/clock.rs)."""
        self.lane_rate = rate
        if self.core is not None and self.mode == "open" and self.lanes > 0:
            self._set_rate()

    def _start_open(self) -> None:
        self.core.start(self.lanes * self.lane_rate)

    def _set_rate(self) -> None:
        self.core.set_rate(self.lanes * self.lane_rate)

    async def closed_lane(self, stopped: asyncio.Event) -> None:
        """A closed-model lane: one more of the core's loops (op, think time) until it
        stops."""
        self._join(lambda: self.core.start_closed(self.lanes, self.think), self._resize)
        try:
            await stopped.wait()
        finally:
            self._leave(self._resize)

    async def load_lane(self, stopped: asyncio.Event) -> bool:
        """A load lane: one more of the core's loops over the worker's slice (the first
        lane starts the load); True once every key is sent and recorded (the lane has
        left the core then: the caller may drain)."""
        if self._load is None and (self._task is None or self._task.done()):
            return bool(self.core.load_done())  # started and over before this lane came

        def start() -> None:
            assert self._load is not None
            op, first, end, rows = self._load
            self._load = None
            self.core.start_load(op, first, end, rows, self.lanes)

        self._join(start, self._resize)
        try:
            while not stopped.is_set():
                if self.core.load_done():
                    return True
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(stopped.wait(), WATCH_S)
            return bool(self.core.load_done())
        finally:
            self._leave(self._resize)

    def load_failed(self) -> int:
        """Rows of the last load on the core whose op failed."""
        return int(self.core.load_failed()) if self.core is not None else 0

    def _join(self, start: Callable[[], None], resize: Callable[[], None]) -> None:
        self.lanes += 1
        if self._task is None or self._task.done():
            start()
            self._task = asyncio.get_running_loop().create_task(self._watch())
        else:
            resize()

    def _leave(self, resize: Callable[[], None]) -> None:
        self.lanes -= 1
        if self.lanes > 0:
            resize()

    def _resize(self) -> None:
        self.core.set_loops(self.lanes)

    async def _watch(self) -> None:
        """Runs while lanes feed the core; stops it once they are gone."""
        try:
            while self.lanes > 0:
                await asyncio.sleep(WATCH_S)
        finally:
            timeout = STOP_TIMEOUT_S if self.stop_timeout is None else self.stop_timeout
            self.abandoned += int(await asyncio.to_thread(self.core.stop, timeout))

    async def idle(self) -> None:
        """Wait until the lanes are gone and the core has stopped."""
        if self._task is not None:
            await self._task
            self._task = None

    def in_flight(self) -> int:
        return int(self.core.in_flight()) if self.core is not None and self._task else 0

    async def drain(self, deadline: float) -> int:
        """End the phase on this path: stop the schedule, wait until `deadline` (monotonic)
        for the ops in flight, merge every second. Ops still out then are given up: how
        many is returned (the caller counts them); their completion is never recorded."""
        if self._task is not None:
            self.stop_timeout = max(0.0, deadline - time.monotonic())
            try:
                await self.idle()
            finally:
                self.stop_timeout = None
        abandoned, self.abandoned = self.abandoned, 0
        self.harvest(int(time.time()) + 1, final=True)
        if self.core is not None:
            intended, counted = self.core.counts()
            self.phase_counts = {"intended": intended - self.counted_from[0],
                                 "counted": counted - self.counted_from[1],
                                 "abandoned": abandoned}
            self.counted_from = (intended, counted)
        return abandoned

    # -- measurement ----------------------------------------------------------------------
    def harvest(self, upto: int, final: bool = False) -> None:
        """Merge what completed in seconds up to `upto` into the phase's buckets."""
        if self.core is None:
            return
        for second, op, sample in self.core.harvest(upto, final):
            self.recorder.add_encoded(self.phase, second, op, sample)

    async def close(self) -> None:
        if self._connecting is not None and not self._connecting.done():
            self._connecting.cancel()
        self._connecting = self._connecting_key = None
        await self.idle()
        self.harvest(int(time.time()) + 1, final=True)
        await self._close_core()

    async def _close_core(self) -> None:
        if self.core is not None:
            await asyncio.to_thread(self.core.close)
        self.core = self.core_key = None


async def prepare(core: Any, statements: dict[str, str]) -> None:
    """Prepare on the core; retried for PREPARE_TIMEOUT_S in all, as the Python paths do
    (backend.prepare): the first CQL phase's schema is created by worker 0 while the other
    workers already prepare (the keyspace does not exist yet)."""
    await prepare_retrying(lambda: asyncio.to_thread(core.prepare, statements, PREPARE_TIMEOUT_S),
                           PREPARE_TIMEOUT_S, (RuntimeError,))


MODE_WORDS = {"open": "open-model sends", "closed": "closed-model sends",
              "load": "the load's inserts"}


def _path_line(path: Mapping[str, Any]) -> str:
    tls = "TLS" if path.get("tls") else "no TLS"
    dc = f"local DC {path['local_dc']}" if path.get("local_dc") else "every DC"
    what = MODE_WORDS.get(str(path.get("mode") or "open"), "sends")
    return (f"{what} on the Rust core: {path.get('driver')} "
            f"{path.get('driver_version')}, {path.get('protocol')}, {tls}, {dc}, "
            f"{path.get('per_node_in_flight')} in flight per node")
