"""Keeps the load agents honest while a run goes: who is gone, what a cut link lost.

Per agent host a *watcher* (``python -m loadtower.agents.spool watch DIR``) runs over
SSH and reports within a quarter second when a worker process is gone; the agent is
then recorded as lost (event ``agent_lost``), the Locust master re-splits its users
over the remaining workers (the open model keeps its total rate) and the host's spool
is read so the lost agent's last seconds are stored.

When the watcher's SSH channel closes (or stays silent for ``SILENT_LINK_S``), the
host's SSH link is taken as lost: the pool reconnects with backoff, the reverse port
forward the workers use to reach the master is opened again on the same port, a new
watcher starts and the spool is read (now and once more a few seconds later), so the
interval lines the workers wrote while cut off are stored: no gap in the seconds.
If the host cannot be reached again, its agents are lost (they stop their load by
themselves after the grace period; see ``agents/worker_main.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import shlex
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from loadtower.agents.spool import parse_read
from loadtower.errors import LoadtowerError
from loadtower.fleet.cancel_tasks import bounded, cancel_and_wait
from loadtower.fleet.cleanup_script import marker_prefix

LINK_CLOSE_WAIT_S = 3.0  # a watcher ended: how long its connection may take to show it closed
SILENT_LINK_S = 8.0  # a watcher that printed nothing (it ticks every second) this long: link lost
REFORWARD_FOR_S = 15.0
SECOND_BACKFILL_AFTER_S = 5.0
SWEEP_TIMEOUT_S = 15.0
SYNC_EVERY_S = 30.0  # read each spool's new lines this often, so the final read stays short
IN_FLIGHT_S = 3.0  # a periodic read leaves lines younger than this to the live path


@dataclass
class AgentHost:
    name: str
    python: str
    remote_port: int
    spool: str
    offsets: dict[str, int] = field(default_factory=dict)
    alive: dict[str, int] = field(default_factory=dict)  # agent -> pid
    last_word: float = field(default_factory=time.monotonic)
    watcher: Any = None
    link: Any = None  # the SSH connection the watcher runs on
    task: asyncio.Task | None = None
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    cut_since: float | None = None


class AgentGuard:
    def __init__(
        self,
        pool: Any,
        sinks: Any,
        send: Callable[[dict[str, Any]], Awaitable[None]],
        master_port: int,
        run_id: str,
    ) -> None:
        self.pool, self.sinks, self.send, self.master_port = pool, sinks, send, master_port
        self.run_id = run_id
        self.hosts: dict[str, AgentHost] = {}
        self.lost: set[str] = set()
        self.closing = False
        self._tasks: set[asyncio.Task] = set()
        self._swept: set[str] = set()  # hosts whose spool was read to the end
        self._syncer: asyncio.Task | None = None
        self.recovered = 0  # lines that never arrived live, read by the periodic reads

    # ------------------------------------------------------------------ watching
    async def watch(self, name: str, python: str, remote_port: int, spool: str) -> None:
        host = self.hosts[name] = AgentHost(name, python, remote_port, spool)
        await self._start_watcher(host)
        host.task = asyncio.create_task(self._supervise(host))
        if self._syncer is None:
            self._syncer = asyncio.create_task(self._sync())

    async def _start_watcher(self, host: AgentHost) -> None:
        command = (
            marker_prefix(self.run_id)  # `loadtower cleanup` finds leftovers by it
            + f"{shlex.quote(host.python)} -m loadtower.agents.spool watch {shlex.quote(host.spool)}"
        )
        host.last_word = time.monotonic()
        host.watcher = await self.pool.stream(
            host.name,
            command,
            on_stdout=lambda line, h=host: self._on_watch(h, line),
            on_stderr=lambda line, h=host: self.sinks.log(h.name, "watcher", line),
        )
        host.link = self._connection(host.name)

    def _on_watch(self, host: AgentHost, raw: str) -> None:
        host.last_word = time.monotonic()
        try:
            line = json.loads(raw)
        except ValueError:
            return
        kind, agent = line.get("type"), str(line.get("agent", ""))
        if kind == "alive" and agent not in self.lost:
            host.alive[agent] = int(line.get("pid", 0))
        elif kind == "gone":
            host.alive.pop(agent, None)
            if not self.closing:
                self._spawn(self._gone(host, agent, str(line.get("reason", "gone")), line))

    def _spawn(self, coro: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _supervise(self, host: AgentHost) -> None:
        restarts = 0
        while not self.closing:
            ended = await self._until_link_ends(host)
            if self.closing:
                return
            if not ended and not self._watched_link_closed(host):
                restarts += 1  # the watcher itself ended; the link is fine
                if restarts > 5:
                    self.sinks.event(
                        "warning", f"agent watcher on {host.name} keeps ending", host=host.name
                    )
                    return
                await asyncio.sleep(1.0)
                with contextlib.suppress(LoadtowerError):
                    await self._start_watcher(host)
                continue
            if not await self._reattach(host):
                return

    async def _until_link_ends(self, host: AgentHost) -> bool:
        """Wait until the watcher ends (False) or goes silent (True: the link hangs)."""
        ended = asyncio.ensure_future(host.watcher.wait())
        try:
            while not self.closing:
                done, _ = await asyncio.wait({ended}, timeout=1.0)
                if done:
                    await self._until_closed_or(host, LINK_CLOSE_WAIT_S)
                    return False
                if time.monotonic() - host.last_word > SILENT_LINK_S:
                    self._abort_link(host.name)
                    return True
            return False
        finally:
            ended.cancel()

    async def _until_closed_or(self, host: AgentHost, timeout: float) -> None:
        """A watcher that ended: give its connection up to `timeout` to show it closed (a
        cut link ends the watcher's channel first; asyncssh sees the connection's end a
        moment later, later still on a busy machine), so that a lost link is never taken
        for a watcher that merely ended."""
        deadline = time.monotonic() + timeout
        while not self._watched_link_closed(host) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)

    def _watched_link_closed(self, host: AgentHost) -> bool:
        """The watcher's own connection closed. Not the pool's current one: another task
        (node metrics, a spool read) may have reconnected already, and the link was lost
        all the same (the master's forwarded port went with it)."""
        link = host.link
        return link is None or link.is_closed()

    def _connection(self, name: str) -> Any:
        return self.pool.conns.get(self.pool.endpoint(name))

    def _link_closed(self, name: str) -> bool:
        conn = self._connection(name)
        return conn is None or conn.is_closed()

    def _abort_link(self, name: str) -> None:
        conn = self._connection(name)
        if conn is not None:
            with contextlib.suppress(Exception):
                conn.abort()

    async def _reattach(self, host: AgentHost) -> bool:
        """The host's SSH link is gone: reconnect, forward again, watch again, backfill."""
        host.cut_since = time.time()
        self.sinks.host_state(host.name, "lost", "the load agents' SSH link closed")
        try:
            await self.pool.connection(host.name)  # backoff; reports reconnecting/gave_up
            cut = time.monotonic() - host.last_word  # since the link's last sign of life
        except LoadtowerError as exc:
            for agent in list(host.alive):
                host.alive.pop(agent, None)
                await self._gone(host, agent, f"its host is unreachable over SSH ({exc})", {})
            return False
        forwarded = await self._reforward(host)
        try:
            await self._start_watcher(host)
        except LoadtowerError as exc:
            self.sinks.event("warning", f"agent watcher on {host.name}: {exc}", host=host.name)
        stored, first, last = await self.backfill(host.name)
        self.sinks.event(
            "agent_link",
            f"load agents on {host.name} reachable again after {cut:.1f} s"
            + ("" if forwarded else " (the master's port could not be forwarded again)")
            + f"; {stored} interval lines backfilled from their spool"
            + (f" (seconds {first}..{last})" if stored else ""),
            host=host.name,
            data={
                "cut_s": round(cut, 1),
                "backfilled": stored,
                "first_ts": first,
                "last_ts": last,
                "forwarded": forwarded,
            },
        )
        host.cut_since = None
        self._spawn(self._later_backfill(host.name))
        return True

    async def _reforward(self, host: AgentHost) -> bool:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + REFORWARD_FOR_S
        while True:
            try:
                await self.pool.forward_remote_port(
                    host.name, host.remote_port, "127.0.0.1", self.master_port
                )
                return True
            except Exception as exc:  # noqa: BLE001 - asyncssh ChannelListenError, lost link
                if loop.time() > deadline or self.closing:
                    self.sinks.event(
                        "warning",
                        f"{host.name}: the workers' way to the master (port {host.remote_port}) "
                        f"could not be forwarded again: {exc}; they stop after the grace period",
                        host=host.name,
                    )
                    return False
            await asyncio.sleep(1.0)

    async def _later_backfill(self, name: str) -> None:
        """Lines spooled while the workers' ZeroMQ link was still reconnecting."""
        await asyncio.sleep(SECOND_BACKFILL_AFTER_S)
        if not self.closing:
            stored, first, last = await self.backfill(name)
            if stored:
                self.sinks.event(
                    "agent_link",
                    f"{stored} more interval lines backfilled from {name}'s spool "
                    f"(seconds {first}..{last})",
                    host=name,
                    data={"backfilled": stored, "first_ts": first, "last_ts": last},
                )

    # ------------------------------------------------------------------ loss
    async def _gone(self, host: AgentHost, agent: str, reason: str, line: dict[str, Any]) -> None:
        if agent in self.lost or self.closing:
            return
        self.lost.add(agent)
        remaining = sorted(a for h in self.hosts.values() for a in h.alive if a not in self.lost)
        self.sinks.event(
            "agent_lost",
            f"load agent {agent} on {host.name} is gone: {reason}; the run goes on with "
            f"{len(remaining)} agent{'s' if len(remaining) != 1 else ''}",
            host=host.name,
            data={
                "agent": agent,
                "pid": line.get("pid"),
                "reason": reason,
                "remaining": remaining,
                "seen_gone_at": line.get("ts"),
            },
        )
        with contextlib.suppress(LoadtowerError):
            await self.send({"cmd": "drop", "agents": [agent]})
        if host.cut_since is None:
            await self.backfill(host.name)  # its last seconds, if the link did not carry them

    # ------------------------------------------------------------------ the spool
    async def _sync(self) -> None:
        """Every SYNC_EVERY_S: move each spool's read offset past what arrived live (and
        store what never did, older than IN_FLIGHT_S)."""
        while not self.closing:
            await asyncio.sleep(SYNC_EVERY_S)
            for name, host in list(self.hosts.items()):
                if self.closing or host.cut_since is not None or self._link_closed(name):
                    continue
                with contextlib.suppress(Exception):
                    stored, first, last = await bounded(
                        self.backfill(name, before=time.time() - IN_FLIGHT_S), SWEEP_TIMEOUT_S
                    )
                    if stored:
                        self.recovered += stored
                        self.sinks.event(
                            "agent_link",
                            f"{stored} interval lines from {name} that never arrived live "
                            f"were read from its spool (seconds {first}..{last})",
                            host=name,
                            data={"backfilled": stored, "first_ts": first, "last_ts": last},
                        )

    def _floors(self, host: AgentHost) -> dict[str, int]:
        """Per spool file: every seq up to this one is stored (its agent is HOST/INDEX)."""
        prefix = f"{host.name}/"
        return {
            f"{agent[len(prefix) :]}.jsonl": floor
            for agent, floor in self.sinks.seen.floor.items()
            if agent.startswith(prefix)
        }

    async def backfill(
        self, name: str, before: float | None = None
    ) -> tuple[int, int | None, int | None]:
        """Store what the host's spool holds and the store does not; (lines, first, last ts).
        With `before`, lines from that second on are left for the live path."""
        host = self.hosts[name]
        stored, first, last = 0, None, None
        async with host.lock:
            options = {"offsets": host.offsets, "floors": self._floors(host), "before": before}
            command = (
                f"{shlex.quote(host.python)} -m loadtower.agents.spool read "
                f"{shlex.quote(host.spool)} {shlex.quote(json.dumps(options))}"
            )
            try:
                status, out, err = await self.pool.run(name, command, timeout=60)
            except LoadtowerError as exc:
                self.sinks.event("warning", f"reading the spool on {name}: {exc}", host=name)
                return 0, None, None
            if status != 0:
                self.sinks.event(
                    "warning", f"reading the spool on {name} failed: {err.strip()[:300]}", host=name
                )
                return 0, None, None
            for file, end, line in parse_read(out):
                host.offsets[file] = end
                if line is None:
                    continue
                if line.get("type") == "interval":
                    if self.sinks.interval(line):
                        stored += 1
                        ts = int(line["ts"])
                        first = ts if first is None else min(first, ts)
                        last = ts if last is None else max(last, ts)
                elif line.get("type") == "event" and self.sinks.first_time(line):
                    self.sinks.event(
                        str(line.get("kind") or "agent"),
                        str(line.get("message", "")),
                        host=name,
                        data=line,
                        ts=float(line.get("ts") or time.time()),
                    )
        return stored, first, last

    # ------------------------------------------------------------------ the end
    async def wait_gone(self, timeout: float) -> None:
        """After `quit`: until every watched worker process has ended (or `timeout`)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while loop.time() < deadline and any(
            h.alive and not self._link_closed(h.name) for h in self.hosts.values()
        ):
            await asyncio.sleep(0.2)

    async def final_sweep(self) -> None:
        async def one(name: str) -> tuple[str, int]:
            try:
                stored, _first, _last = await bounded(self.backfill(name), SWEEP_TIMEOUT_S)
            except TimeoutError:
                self.sinks.event("warning", f"the final spool read on {name} timed out", host=name)
                return name, -1
            return name, stored

        results = await asyncio.gather(*(one(n) for n in self.hosts))
        restored = {name: n for name, n in results if n > 0}
        if restored:
            self.sinks.event(
                "agent_link",
                "final spool read: "
                + ", ".join(f"{n} lines from {name}" for name, n in restored.items())
                + " that had not arrived live",
                data={"backfilled": restored},
            )
        self._swept = {name for name, n in results if n >= 0}

    def lines_complete(self) -> None:
        """The last stop's ack said every line of every agent is in (each drained and
        answered after its lines): the spools need no final read before removal."""
        self._swept = set(self.hosts)

    async def stop(self) -> None:
        """Stop the watchers and their tasks; remove the spools that were read to the end."""
        self.closing = True
        await cancel_and_wait([*self._tasks, *(h.task for h in self.hosts.values()),
                               self._syncer])
        for host in self.hosts.values():
            if host.watcher is not None:
                with contextlib.suppress(Exception):
                    await bounded(host.watcher.terminate(), 10)
            if host.name in self._swept:
                parent = host.spool.rsplit("/", 1)[0]
                with contextlib.suppress(Exception):
                    await self.pool.run(
                        host.name,
                        f"rm -rf {shlex.quote(host.spool)}; rmdir {shlex.quote(parent)} 2>/dev/null; true",
                        timeout=15,
                    )
