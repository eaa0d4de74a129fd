"""The agent guard takes a cut link for lost even when another task reconnected first.

The per-second /proc poll over SSH shares the pool: after a cut it may reconnect before
the guard looks, and the pool's current connection is then open. The watcher's own
connection is the one that says whether the link was lost (a lost link needs its port
forwarded again, a watcher that merely ended does not).
"""

from __future__ import annotations

import asyncio
from typing import Any

from loadtower.orchestrator.agent_guard import AgentGuard


class Conn:
    def __init__(self) -> None:
        self.closed = False

    def is_closed(self) -> bool:
        return self.closed

    def abort(self) -> None:
        self.closed = True


class Watcher:
    def __init__(self) -> None:
        self.ended = asyncio.Event()

    async def wait(self) -> None:
        await self.ended.wait()


class Pool:
    """The SSH pool's surface the guard uses, over fake connections."""

    def __init__(self) -> None:
        self.conns: dict[str, Conn] = {"agent2": Conn()}
        self.watchers: list[Watcher] = []
        self.forwards = 0

    def endpoint(self, name: str) -> str:
        return name

    async def connection(self, name: str) -> Conn:
        if self.conns[name].is_closed():
            self.conns[name] = Conn()
        return self.conns[name]

    async def stream(self, name: str, command: str, on_stdout: Any, on_stderr: Any) -> Watcher:
        await self.connection(name)
        self.watchers.append(Watcher())
        return self.watchers[-1]

    async def forward_remote_port(self, *args: Any) -> None:
        self.forwards += 1

    async def run(self, name: str, command: str, timeout: float) -> tuple[int, str, str]:
        return 0, "", ""


class Sinks:
    def __init__(self) -> None:
        self.events: list[tuple[str, str]] = []
        self.seen = type("Seen", (), {"floor": {}})()

    def host_state(self, host: str, state: str, detail: str = "") -> None:
        self.events.append(("host_state", f"{host} {state}"))

    def event(self, kind: str, message: str, **_: Any) -> None:
        self.events.append((kind, message))

    def log(self, *args: Any) -> None:
        pass


def _stop(guard: AgentGuard) -> None:
    guard.closing = True
    for task in list(guard._tasks) + [guard.hosts["agent2"].task, guard._syncer]:
        if task is not None:
            task.cancel()


async def _cut_then_reconnect_by_another_task(reconnect_first: bool) -> tuple[Sinks, Pool]:
    pool, sinks = Pool(), Sinks()

    async def send(_: dict[str, Any]) -> None:
        pass

    guard = AgentGuard(pool, sinks, send, master_port=5557, run_id="r1")
    await guard.watch("agent2", "python3", 40000, "/tmp/spool")
    old = pool.conns["agent2"]
    old.closed = True  # the link is cut: its connection and the watcher's channel end
    if reconnect_first:  # the /proc poll's pool.run reconnects before the guard looks
        await pool.connection("agent2")
    pool.watchers[0].ended.set()
    for _ in range(200):
        await asyncio.sleep(0.01)
        if any(kind == "agent_link" for kind, _ in sinks.events):
            break
    _stop(guard)
    return sinks, pool


def test_a_cut_link_is_lost_even_when_another_task_reconnected_first() -> None:
    sinks, pool = asyncio.run(_cut_then_reconnect_by_another_task(reconnect_first=True))
    assert ("host_state", "agent2 lost") in sinks.events
    assert any(kind == "agent_link" for kind, _ in sinks.events), sinks.events
    assert pool.forwards == 1  # the master's port is forwarded again on the new link


def test_a_cut_link_nobody_reconnected_is_lost() -> None:
    sinks, pool = asyncio.run(_cut_then_reconnect_by_another_task(reconnect_first=False))
    assert ("host_state", "agent2 lost") in sinks.events
    assert pool.forwards == 1


async def _watcher_ends_on_a_live_link() -> tuple[Sinks, Pool]:
    pool, sinks = Pool(), Sinks()

    async def send(_: dict[str, Any]) -> None:
        pass

    guard = AgentGuard(pool, sinks, send, master_port=5557, run_id="r1")
    await guard.watch("agent2", "python3", 40000, "/tmp/spool")
    pool.watchers[0].ended.set()  # the watcher process ended; its connection is fine
    for _ in range(600):
        await asyncio.sleep(0.01)
        if len(pool.watchers) > 1:
            break
    _stop(guard)
    return sinks, pool


def test_a_watcher_that_ended_on_a_live_link_is_restarted_not_lost() -> None:
    sinks, pool = asyncio.run(_watcher_ends_on_a_live_link())
    assert len(pool.watchers) == 2
    assert not any(e == ("host_state", "agent2 lost") for e in sinks.events)
    assert pool.forwards == 0
