"""The load, as the orchestrator drives it: a Locust master here, workers on agent hosts.

The master is a local process (`loadtower agent master`) controlled through JSON lines
on its stdin; it prints every worker's interval lines (the agent protocol) on stdout.
Workers (`loadtower agent worker`) run on the agent hosts over SSH and reach the master
through SSH reverse port forwards, so agent hosts need no open ports.

Faults (``agent_guard.py``, docs/orchestrator.md): workers spool every line on their
host first; an agent process that dies is recorded and its users re-split over the
others; a host whose SSH link drops is reconnected and its spool backfilled.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shlex
import signal
import sys
from collections.abc import Callable
from typing import Any

from loadtower.agents.spool import spool_dir
from loadtower.errors import LoadtowerError
from loadtower.fleet.agent_secrets import AgentSecrets
from loadtower.fleet.cancel_tasks import bounded, cancel_and_wait
from loadtower.fleet.cleanup_script import marker_env, marker_prefix
from loadtower.orchestrator.agent_guard import AgentGuard
from loadtower.orchestrator.secrets import db_password
from loadtower.orchestrator.sinks import Sinks
from loadtower.orchestrator.targets import connection
from loadtower.protocol.engine_kinds import path_events
from loadtower.protocol.link_secrets import KEY_ENV
from loadtower.protocol.phase_spec import PhaseSpec
from loadtower.protocol.version import PROTOCOL_VERSION
from loadtower.scenarios.plan import Plan

JOIN_TIMEOUT_S = 90.0
START_TIMEOUT_S = 150.0
RUN_MARKER = "--lt-run"
# the agents' event kinds stored as they are named (others as "agent"), and the engines'
# path events (path_events(): which path a phase's sends take)
KEPT_EVENT_KINDS = ("warning", "error", "rebalanced", "worker_silent", "worker_back", "agent_orphaned",
                    "dataset", "link_refused")
WORKERS_END_S = 10.0
# the master acknowledges a stop once every line of the phase and the agents' drain
# events are in (the agents' drain is bounded well below this)
STOP_ACK_TIMEOUT_S = 60.0
# an operator's stop (Ctrl-C, the TUI's stop): the agents wait this long at most for
# their ops in flight, and the stop's ack is waited for this long at most
INTERRUPT_DRAIN_S = 1.0
INTERRUPT_ACK_S = INTERRUPT_DRAIN_S + 2.0
MASTER_EXIT_WAIT_S = 5.0  # the master's output ended: how long its exit status is waited for


def exit_text(code: int | None) -> str:
    """How a process ended, from asyncio's returncode (negative: the signal that ended it)."""
    if code is None:
        return "closed its output but has not exited"
    if code < 0:
        with contextlib.suppress(ValueError):
            return f"was killed by {signal.Signals(-code).name}"
        return f"was killed by signal {-code}"
    return f"exited with status {code}"


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class LocustLoad:
    def __init__(self, pool: Any, plan: Plan, run_id: str, sinks: Sinks) -> None:
        self.pool = pool
        self.plan = plan
        self.run_id = run_id
        self.sinks = sinks
        self.master: asyncio.subprocess.Process | None = None
        self.workers: dict[str, Any] = {}
        self.pythons: dict[str, str] = {}  # per agent host, when not the inventory's python
        self.expected = 0
        self.joined: set[str] = set()
        self.first_error = ""  # the first error event an agent sent since the last start
        self._joined_changed = asyncio.Event()
        self._done = asyncio.Event()
        self._acks: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self._stopping: asyncio.Future[None] | None = None  # the phase's stop, once sent
        self.interrupted = asyncio.Event()  # the operator stopped the run: no load from now
        self.lines_complete = False  # the last stop's ack: every agent drained, lines in
        self._drain_missing = False  # the master named an agent without a drain report
        self._reader: asyncio.Task[None] | None = None
        self._stderr: asyncio.Task[None] | None = None
        self.guard: AgentGuard | None = None
        self.secrets = AgentSecrets(pool, run_id)
        self.closing = False  # close() told the master to quit: its end is expected
        self.master_lost: str | None = None  # why, when the master ended by itself
        self.on_master_lost: Callable[[str], None] | None = None  # the run's stop

    # ------------------------------------------------------------------ set-up
    async def prepare(self) -> None:
        agents = self.plan.inventory.with_role("agent")
        port = _free_port()
        counts = {name: host.processes or await self._cores(name) for name, host in agents.items()}
        self.expected = sum(counts.values())
        # the run's link key: only workers that hold it are heard (docs/security.md)
        env = {**os.environ, KEY_ENV: self.secrets.key.hex()}
        env.update(marker_env(self.run_id))  # `loadtower cleanup` finds leftovers by it
        grace = float(self.plan.inventory.ssh.agent_grace)
        self.master = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "loadtower",
            "agent",
            "master",
            "--bind",
            f"127.0.0.1:{port}",
            "--expect-workers",
            str(self.expected),
            "--grace",
            f"{grace:g}",
            RUN_MARKER,
            self.run_id,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=env,
            limit=2**24,
            process_group=0,  # a terminal's Ctrl-C is the orchestrator's to act on
        )
        self._reader = asyncio.create_task(self._read_master())
        self._stderr = asyncio.create_task(self._read_stderr())
        self.guard = AgentGuard(self.pool, self.sinks, self._send, port, self.run_id)
        for name in agents:
            python = self.pythons.get(name, agents[name].python)
            private = await self.secrets.open(name, python)  # the link key, over SSH
            remote_port = await self.pool.forward_remote_port(name, 0, "127.0.0.1", port)
            self.sinks.event(
                "agents",
                f"load worker on {name} reaches the Locust master through an SSH reverse "
                f"forward ({name} 127.0.0.1:{remote_port} -> 127.0.0.1:{port})",
                host=name,
                data={"remote_port": remote_port, "master_port": port},
            )
            # the first line of the host's output says, from there, where its workers go
            hello = (
                f"loadtower workers on {name} (machine $(hostname), shell pid $$): Locust master "
                f"at 127.0.0.1:{remote_port}, an SSH reverse forward to the orchestrator's "
                f"127.0.0.1:{port}"
            )
            command = (
                f'echo "{hello}" >&2; '
                + marker_prefix(self.run_id)  # `loadtower cleanup` finds leftovers by it
                + f"{shlex.quote(self.pythons.get(name, agents[name].python))} -m loadtower agent worker "
                f"--master 127.0.0.1:{remote_port} --processes {counts[name]} "
                f"--host-name {shlex.quote(name)} {RUN_MARKER} {self.run_id} "
                f"--spool-dir {shlex.quote(spool_dir(self.run_id, name))} --grace {grace:g} "
                f"--secret-dir {shlex.quote(private)}"
                + (" --merge" if agents[name].merge_workers else "")
            )
            self.workers[name] = await self.pool.stream(
                name,
                command,
                on_stdout=lambda line, host=name: self.sinks.log(host, "stdout", line),
                on_stderr=lambda line, host=name: self.sinks.log(host, "stderr", line),
            )
            await self.guard.watch(name, python, remote_port, spool_dir(self.run_id, name))
        await self._wait_joined()

    async def _cores(self, host: str) -> int:
        status, out, _err = await self.pool.run(host, "nproc", timeout=15)
        return max(1, int(out.strip())) if status == 0 and out.strip().isdigit() else 1

    async def _wait_joined(self) -> None:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + JOIN_TIMEOUT_S
        while len(self.joined) < self.expected:
            remaining = deadline - loop.time()
            if remaining <= 0 or (self.master and self.master.returncode is not None):
                raise LoadtowerError(
                    f"only {len(self.joined)} of {self.expected} load workers joined the Locust "
                    f"master within {JOIN_TIMEOUT_S:g} s (see the run's log for the agent hosts' output)"
                )
            self._joined_changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._joined_changed.wait(), timeout=min(remaining, 1.0))
        self.sinks.event(
            "agents", f"{len(self.joined)} load workers joined on {len(self.workers)} agent hosts"
        )

    # ------------------------------------------------------------------ master I/O
    async def _send(self, command: dict[str, Any]) -> None:
        if self.master is None or self.master.stdin is None or self.master.returncode is not None:
            raise LoadtowerError("the Locust master process is not running")
        self.master.stdin.write((json.dumps(command) + "\n").encode())
        await self.master.stdin.drain()

    async def _read_master(self) -> None:
        assert self.master is not None and self.master.stdout is not None
        async for raw in self.master.stdout:
            try:
                line = json.loads(raw)
            except ValueError:
                self.sinks.log("orchestrator", "master", raw.decode(errors="replace").rstrip())
                continue
            # ASCII text without a \u escape: every string in the line is ASCII
            self._dispatch(line, raw.isascii() and b"\\u" not in raw)
        await self._master_ended()

    async def _master_ended(self) -> None:
        """The master's output ended. Unless close() told it to quit, it died (killed, out
        of memory, a crash): no load runs without it, so the run hears of it now, in one
        error event and through `on_master_lost` (the run's stop), rather than waiting out
        its phases at 0 ops/s. What the workers spooled and did not send is read at the
        run's end (AgentGuard.final_sweep), as after a cut link."""
        if self.closing or self.master is None:
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.master.wait(), timeout=MASTER_EXIT_WAIT_S)
        if self.closing:
            return
        why = (f"the Locust master (pid {self.master.pid}) {exit_text(self.master.returncode)}: "
               "no load can run without it, so the run stops; every sample taken is kept")
        self.master_lost = why
        self.first_error = self.first_error or why
        self.sinks.event("error", why)
        self._acks.put_nowait({"type": "master_lost"})  # an ack waited for never comes
        if self.on_master_lost is not None:
            self.on_master_lost(why)

    async def _read_stderr(self) -> None:
        assert self.master is not None and self.master.stderr is not None
        async for raw in self.master.stderr:
            self.sinks.log("orchestrator", "master", raw.decode(errors="replace").rstrip())

    def _dispatch(self, line: dict[str, Any], ascii_text: bool = False) -> None:
        kind = line.get("type")
        if kind == "interval":
            self.sinks.interval(line, ascii_text)
        elif kind == "event":
            if not self.sinks.first_time(line):
                return  # an agent's event that its spool gave us already
            event = str(line.get("kind", "agent"))
            if event == "drain":  # how long a phase's end waited for its in-flight ops
                self.sinks.drain(line)
                return
            worker = line.get("worker") or line.get("agent")
            agent = str(line.get("agent") or "")
            host = line.get("host") or (agent.split("/")[0] if "/" in agent else None)
            message = str(line.get("message", event))
            if event == "worker_joined" and worker:
                self.joined.add(str(worker))
                self._joined_changed.set()
                if host:  # the master knew the worker's name (HOST/INDEX) when it joined
                    message = f"load worker {agent} joined from {host} (Locust id {worker})"
            elif event in ("worker_lost", "worker_left", "worker_missing") and worker:
                self.joined.discard(str(worker))
            elif event == "warning" and "no drain report" in message:
                self._drain_missing = True  # lines of the phase may come after the ack
            elif event == "error" and not self.first_error:
                self.first_error = str(line.get("message", ""))  # named when a start fails
            self.sinks.event(
                event if event in KEPT_EVENT_KINDS or event in path_events() else "agent",
                message, host=host, data=line,
            )
        elif kind in ("phase_done", "done"):
            self._done.set()
        elif kind in ("started", "failed", "stopped"):
            self._acks.put_nowait(line)

    # ------------------------------------------------------------------ the Load protocol
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
    ) -> None:
        if self.interrupted.is_set():
            return  # the operator stopped the run: no load starts after that
        self._done.clear()
        self.first_error = ""
        self._stopping = None
        while not self._acks.empty():
            self._acks.get_nowait()
        conn = self._connection(spec)
        conn.setdefault("password", db_password(self.plan) or "")  # the scenario's engine's
        # the password and the TLS key go to the agent hosts over SSH, not over the link
        command = await self.secrets.strip(
            {
                "cmd": "start",
                "protocol": PROTOCOL_VERSION,
                "phase": phase,
                "spec": conn.pop("spec"),
                "mode": mode,
                "rate": rate,
                "users": users,
                "think_time": think_time,
                "duration": duration,
                "records": records,
                "concurrency": concurrency,
                **conn,
            }
        )
        await self._send(command)
        ack = await self._unless_interrupted(self._ack(("started", "failed"), START_TIMEOUT_S))
        if ack is None:
            return  # stopped meanwhile: the phase handler's stop() waits for that stop's ack
        if ack.get("type") == "failed":
            why = str(ack.get("message", "the load did not start"))
            cause = f" ({self.first_error})" if self.first_error else ""
            raise LoadtowerError(f"phase {phase}: {why}{cause}")

    async def _ack(self, kinds: tuple[str, ...], timeout: float) -> dict[str, Any]:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise LoadtowerError(
                    f"the Locust master did not answer ({' or '.join(kinds)}) within {timeout:g} s"
                )
            if self.master_lost is not None:
                raise LoadtowerError(self.master_lost)
            try:
                line = await asyncio.wait_for(self._acks.get(), timeout=remaining)
            except TimeoutError:
                continue
            if line.get("type") in kinds:
                return line

    async def _unless_interrupted(
        self, awaitable: Any
    ) -> dict[str, Any] | None:
        """`awaitable`'s result, or None when the operator stops the run first."""
        task = asyncio.ensure_future(awaitable)
        stop = asyncio.ensure_future(self.interrupted.wait())
        try:
            await asyncio.wait({task, stop}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            stop.cancel()
            if not task.done():
                task.cancel()
        return task.result() if task.done() and not task.cancelled() else None

    async def stop(self) -> None:
        """Stop the phase's load; returns once the master acknowledged it, that is once
        every interval line of the phase (dispatched in order by ``_read_master``, so
        already in the live stats) and its drain events are in. A stop already sent (the
        operator's, ``interrupt``) is waited for, not sent again."""
        if self._stopping is None:
            self._stopping = asyncio.ensure_future(self._stop(None))
        await asyncio.shield(self._stopping)

    def interrupt(self) -> None:
        """The operator stopped the run (Ctrl-C, the TUI's stop): the load stops now,
        whatever the phase handler is waiting for, its ops in flight drained within
        INTERRUPT_DRAIN_S; no load starts after this."""
        if self.interrupted.is_set():
            return
        self.interrupted.set()
        if self._stopping is None and self.master is not None:
            self._stopping = asyncio.ensure_future(self._stop(INTERRUPT_DRAIN_S))

    async def _stop(self, drain_s: float | None) -> None:
        command: dict[str, Any] = {"cmd": "stop"}
        if drain_s is not None:
            command["drain_s"] = drain_s
        timeout = STOP_ACK_TIMEOUT_S if drain_s is None else INTERRUPT_ACK_S
        self.lines_complete = self._drain_missing = False
        try:
            await self._send(command)
            await self._ack(("stopped",), timeout)
            self.lines_complete = not self._drain_missing
        except LoadtowerError as exc:  # the phase's figures may lack its last lines: say so
            self.sinks.event("warning", f"stopping the load: {exc}; the phase's figures may "
                             "miss its last lines")

    async def steer(self, kind: str, value: float) -> None:
        """The running run phase's load, steered: ``rate`` (its open model's new total
        ops/s) or ``users`` (its closed model's). The master passes it on to every worker
        at once (``lt_rate``, or Locust's spawning); the phase checked that it applies."""
        if self.interrupted.is_set() or self._stopping is not None:
            raise LoadtowerError("the phase's load is stopping")
        number: float | int = float(value) if kind == "rate" else int(value)
        await self._send({"cmd": kind, kind: number})

    async def wait_done(self, timeout: float | None = None) -> bool:
        try:
            await asyncio.wait_for(self._done.wait(), timeout=timeout)
        except TimeoutError:
            return False
        return True

    def _connection(self, spec: PhaseSpec) -> dict[str, Any]:
        """Contact points, port and login of the spec's target (its engine, its hosts), and
        the spec with the connection options the workers need."""
        return connection(self.plan, spec)

    async def close(self) -> None:
        self.closing = True
        if self.guard is not None:
            self.guard.closing = True
        with contextlib.suppress(Exception):
            await self._send({"cmd": "quit"})
        # the run's secrets off the agent hosts first (the workers read them at a phase's
        # start; the waits below may use up the caller's time)
        with contextlib.suppress(Exception):
            for problem in await self.secrets.remove():
                self.sinks.event("warning", f"removing the run's secrets: {problem}")
        if self.guard is not None:  # workers whose SSH stream was cut: wait via the watcher
            await self.guard.wait_gone(WORKERS_END_S)
        await asyncio.gather(*(self._end_worker(n, p) for n, p in self.workers.items()))
        if self.guard is not None:
            if self.interrupted.is_set() and self.lines_complete:
                self.guard.lines_complete()  # an operator's stop: the run leaves, at once
            else:
                with contextlib.suppress(Exception):
                    await self.guard.final_sweep()  # whatever the link lost: store it now
            with contextlib.suppress(Exception):
                await self.guard.stop()
        if self.master is not None:
            try:
                await asyncio.wait_for(self.master.wait(), timeout=10)
            except TimeoutError:
                self.master.kill()
                await self.master.wait()
        await cancel_and_wait([self._reader, self._stderr])


    async def _end_worker(self, name: str, process: Any) -> None:
        """An agent host's worker command: ended (it was told to quit), or terminated."""
        with contextlib.suppress(Exception):
            await bounded(process.wait(), 10)
        with contextlib.suppress(Exception):
            await process.terminate()
        self.sinks.event("agents", f"load worker on {name} stopped", host=name)


def create_load(pool: Any, plan: Plan, run_id: str, sinks: Sinks,
                pythons: dict[str, str] | None = None) -> LocustLoad:
    load = LocustLoad(pool, plan, run_id, sinks)
    load.pythons = dict(pythons or {})
    return load
