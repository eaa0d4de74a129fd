"""Open-model lanes of the acsylla path, run by the native sender.

Each Locust user still registers a lane with the engine; on this path a lane only adds
its rate to the process's schedule. One coroutine on the engine's loop binds the ops
of the next fraction of a second (op mix, keys, values: the same `CqlOps` as every
other path) and queues them with their intended start times; the native sender sends
each at its time and measures it: over loadtower's own CQL connections (`wire_sender`,
the default) or the C++ driver under acsylla (`native_sender`), per the target's
`native_io`. Python wakes a few dozen times a second, whatever the rate.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from loadtower.agents.measure import IntervalRecorder, new_hist

if TYPE_CHECKING:  # imported when used: numba is not loaded by agents that never need it
    from loadtower.agents.cql.native_sender import NativeSender, NativeSession
    from loadtower.agents.cql.wire_sender import WireSender, WireSession

    Session = NativeSession | WireSession
    Sender = NativeSender | WireSender

AHEAD_S = 0.25  # how much of the schedule is bound and queued ahead
REFILL_S = 0.1
REPAIR_S = 1.0  # a broken connection of the wire sender is retried this often
REFRESH_S = 10.0  # and the topology read again this often (nodes joining under load)
MAX_OPS = 8  # the CQL op table has 8 ops (np.zeros pages in only the rows used)
NOT_NATIVE = {"read_modify_write"}  # two dependent round trips: the asyncio path runs it


def _old_path(target: Any) -> str:
    """``native_io`` among this feed's senders: "rust" (the Rust core, agents/cql/rust_feed.py)
    falls back to "wire" here when the core cannot run a phase."""
    asked = str(target.get("native_io") or "wire")
    return "wire" if asked == "rust" else asked


def available() -> bool:
    try:
        from loadtower.agents.cql import native_api

        native_api.library()
        return True
    except (ImportError, OSError, AttributeError):
        return False


class NativeFeed:
    def __init__(self, recorder: IntervalRecorder, warn: Callable[[str], None],
                 late_s: float, event: Callable[[str, str], None] | None = None) -> None:
        self.recorder, self.warn, self.late_s = recorder, warn, late_s
        self.event = event  # (kind, message): an agent event line
        self.phase = ""  # the phase whose ops the sender sends now (set at configure)
        self.stop_timeout: float | None = None  # the sender's wait for its ops at a drain
        self.session: Session | None = None
        self.session_key: tuple | None = None
        self.sender: Sender | None = None
        self.ops: dict[str, Callable[[], Any]] = {}
        self.choose: Callable[[], str] | None = None
        self.index: dict[str, int] = {}
        self.rate = 0.0
        self.lanes = 0
        self._task: asyncio.Task | None = None
        self._connecting: asyncio.Task | None = None
        self._connecting_key: tuple | None = None
        self._repair_at = 0.0
        self._refresh_at = time.monotonic() + REFRESH_S

    @staticmethod
    def usable(session: Any, engine: str) -> bool:
        """A CQL target whose session is acsylla (asked for, or `auto`)."""
        return getattr(session, "name", "") == "acsylla" and engine == "cassandra" and available()

    @staticmethod
    def wanted(cfg: Any, session: Any, engine: str, mix: dict[str, float]) -> bool:
        """Open-model run phases on such a target, without two-round-trip ops."""
        return (cfg.mode == "run" and bool(cfg.lane_rate) and not NOT_NATIVE & set(mix)
                and NativeFeed.usable(session, engine))

    def connect_early(self, cfg: Any, key: tuple) -> None:
        """Start compiling and connecting in the background (from any CQL phase on acsylla,
        e.g. the load), so that the first run phase does not wait for it."""
        if self._connecting is None or self._connecting_key != key:
            task = asyncio.get_running_loop().create_task(self._connect(cfg, key))
            task.add_done_callback(lambda t: t.cancelled() or t.exception())  # read later
            self._connecting, self._connecting_key = task, key

    async def _connect(self, cfg: Any, key: tuple) -> None:
        await self.idle()
        if self.session is not None and self.session_key == key:
            return
        await self._close_session()
        if self.io_path(cfg) == "wire":
            from loadtower.agents.cql import wire_sender
            warm: Callable[[], None] = wire_sender.warm
            session: Any = wire_sender.WireSession()
            make_sender: Any = wire_sender.WireSender
        else:
            from loadtower.agents.cql import native_sender
            warm = native_sender.warm
            session, make_sender = native_sender.NativeSession(), native_sender.NativeSender
        await asyncio.to_thread(warm)  # compiled now, not when the first op is due
        args = (cfg.contact_points, cfg.port or 9042, cfg.username, cfg.password,
                cfg.spec["target"]["consistency"])
        if self.io_path(cfg) == "driver":
            from loadtower.agents.cql.backend import tls_of

            tls, local_dc = tls_of(cfg), cfg.spec["target"].get("local_dc")
            await asyncio.to_thread(lambda: session.connect(*args, tls, local_dc))
        else:
            await asyncio.to_thread(session.connect, *args)
        self.session, self.session_key = session, key
        note = self.path_note(cfg)
        if note and self.event is not None:
            self.event("cql_path", note)
        self.sender = make_sender(session, MAX_OPS, new_hist().counts_len,
                                  cfg.max_in_flight, self.late_s)

    def io_path(self, cfg: Any) -> str:
        """``native_io`` as asked, except that the wire connections have neither TLS nor
        a DC filter: with TLS or ``local_dc`` the C++ driver sends instead (said once per
        connection, in a ``cql_path`` event)."""
        target = cfg.spec["target"]
        asked = _old_path(target)
        if asked != "wire":
            return str(asked)
        tls = bool((cfg.spec.get("connection") or {}).get("tls"))
        return "driver" if tls or target.get("local_dc") else "wire"

    def path_note(self, cfg: Any) -> str | None:
        """The line saying which sender runs when it is not the one asked for."""
        target = cfg.spec["target"]
        if _old_path(target) != "wire" or self.io_path(cfg) == "wire":
            return None
        why = " and ".join(w for w, on in (
            ("TLS", bool((cfg.spec.get("connection") or {}).get("tls"))),
            (f"local_dc {target.get('local_dc')}", bool(target.get("local_dc"))),
        ) if on)
        return (f"native_io wire has no {why}: the open-model sender runs on the C++ "
                "driver (native_io driver) instead")

    async def configure(self, cfg: Any, key: tuple, statements: dict[str, str],
                        make_ops: Callable[[Session], Any], choose: Callable[[], str]) -> None:
        """Connect (once per target), prepare this phase's statements, build its ops."""
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
        assert self.session is not None and self.sender is not None
        self.sender.set_max_in_flight(cfg.max_in_flight)
        await asyncio.to_thread(self.session.prepare, statements)
        self.ops, self.choose = make_ops(self.session).table(), choose

    # -- lanes ------------------------------------------------------------------------
    async def lane(self, stopped: asyncio.Event, rate: float) -> None:
        """A lane's life on this path: its rate joins the schedule until it stops."""
        self.rate += rate
        self.lanes += 1
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._feed())
        try:
            await stopped.wait()
        finally:
            self.rate -= rate
            self.lanes -= 1

    async def _feed(self) -> None:
        sender, choose = self.sender, self.choose
        assert sender is not None and choose is not None
        sender.start()
        self._refresh_at = time.monotonic() + REFRESH_S  # prepare() has just read it
        repairing: asyncio.Future | None = None
        try:
            next_t: float = time.monotonic_ns()
            while self.lanes > 0:
                if self.rate > 0:
                    next_t = self._fill(sender, choose, next_t)
                if repairing is None or repairing.done():  # reconnect broken connections
                    self._repaired(repairing)
                    repairing = self._repair()
                await asyncio.sleep(REFILL_S)
        except Exception as exc:  # noqa: BLE001 - reported, and the sender is stopped
            self.warn(f"the native sender stopped: {type(exc).__name__}: {exc}")
        finally:
            timeout = self.stop_timeout
            await asyncio.to_thread(sender.stop, *(() if timeout is None else (timeout,)))
            if repairing is not None:
                await asyncio.wait([repairing])  # before the session may close
                self._repaired(repairing)

    def _fill(self, sender: Sender, choose: Callable[[], str], next_t: float) -> float:
        """Bind and queue the ops whose intended start is before the horizon."""
        interval = 1e9 / self.rate
        count = min(sender.room(), int((time.monotonic_ns() + AHEAD_S * 1e9 - next_t) / interval))
        items, indexes, times = [], [], []
        ops, index = self.ops, self._op_index
        for _ in range(max(0, count)):
            op = choose()
            items.append(ops[op]())
            indexes.append(index(op))
            times.append(int(next_t))
            next_t += interval
        if items:
            pushed = sender.push(items, indexes, times)
            if pushed < len(items):  # the wire sender's arena is full: these come again
                return times[pushed]
        return next_t

    def _repair(self) -> asyncio.Future | None:
        """Reconnect broken connections (every REPAIR_S) and take in topology changes
        (every REFRESH_S), in a thread: the wire sender's; the driver does its own."""
        now = time.monotonic()
        if not hasattr(self.session, "maintain"):
            return None
        session = cast("WireSession", self.session)  # the one session type that has maintain()
        refresh = now >= self._refresh_at
        if not refresh and not (now >= self._repair_at and session.down()):
            return None
        self._repair_at = now + REPAIR_S
        if refresh:
            self._refresh_at = now + REFRESH_S
        return asyncio.ensure_future(asyncio.to_thread(session.maintain, refresh))

    def _repaired(self, repairing: asyncio.Future | None) -> None:
        if repairing is not None and not repairing.cancelled() and repairing.exception():
            exc = repairing.exception()
            self.warn(f"reconnecting the native sender: {type(exc).__name__}: {exc}")

    def _op_index(self, op: str) -> int:
        index = self.index.get(op)
        if index is None:
            if len(self.index) >= MAX_OPS:
                raise ValueError(f"more than {MAX_OPS} op names in one process")
            index = self.index[op] = len(self.index)
        return index

    async def idle(self) -> None:
        """Wait until the lanes are gone and the sender has stopped."""
        if self._task is not None:
            await self._task
            self._task = None

    def in_flight(self) -> int:
        """Ops the sender has sent and not yet seen end (0 when no lane feeds it)."""
        return self.sender.in_flight() if self.sender is not None and self._task else 0

    async def drain(self, deadline: float) -> int:
        """End the phase on this path: stop the feed (ops queued but not yet sent are
        dropped), wait until `deadline` (monotonic) for the ops in flight, merge every
        second into the phase's buckets. Ops still in flight then are given up: how many
        is returned (the caller counts them), and their completion will not be recorded."""
        if self._task is None:
            self.harvest(int(time.time()) + 1, final=True)
            return 0
        self.stop_timeout = max(0.0, deadline - time.monotonic())
        try:
            await self.idle()
        finally:
            self.stop_timeout = None
        sender = self.sender
        abandoned = sender.abandon() if sender is not None else 0
        self.harvest(int(time.time()) + 1, final=True)
        return abandoned

    # -- measurement ----------------------------------------------------------------------
    def harvest(self, upto: int, final: bool = False) -> None:
        """Merge what completed in seconds up to `upto` into the phase's buckets (`final`:
        the sender is stopped, its seconds may be read again by the next phase)."""
        if self.sender is None:
            return
        names = {i: op for op, i in self.index.items()}
        for second, index, sample in self.sender.harvest(upto, final):
            self.recorder.add_counts(self.phase, second, names[index], sample)

    async def close(self) -> None:
        """Stop, merge what is left into the recorder, close the session."""
        if self._connecting is not None and not self._connecting.done():
            self._connecting.cancel()
        self._connecting = self._connecting_key = None
        await self.idle()
        self.harvest(int(time.time()) + 1, final=True)
        await self._close_session()

    async def _close_session(self) -> None:
        if self.session is not None:
            await asyncio.to_thread(self.session.close)
        self.session = self.sender = None
        self.session_key = None

