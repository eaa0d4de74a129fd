"""`loadtower agent master`: the Locust master, driven by JSON commands on stdin.

Commands (one JSON object per line): ``start`` (a phase: spec, mode, rate/users,
records, concurrency, connection), ``stop``, ``drop`` (agents the orchestrator found
gone: their users are re-split over the remaining workers, so an open model keeps its
total rate), ``rate`` and ``users`` (steer the running phase: a new total rate, split
over its users, or a new number of users), ``quit``. Output on stdout, one JSON object
per line: every worker's interval lines, events (``worker_joined``, ``worker_left``,
``worker_silent``, ``worker_back``, ``rebalanced``, errors), ``phase_done`` when a load
phase inserted everything, ``stopped`` after a stop. Workers reach the master through SSH reverse
forwards; a worker that is silent (its link cut) stays counted for ``grace`` seconds
and is brought back in step (stopped, or given the current phase) when it answers again.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import sys
import threading
import time
from collections.abc import Collection
from typing import Any, cast

from loadtower.agents import locust_setup as ls
from loadtower.agents.inflight import DRAIN_TIMEOUT_S
from loadtower.errors import LoadtowerError
from loadtower.orchestrator import master_socket
from loadtower.orchestrator.link_guard import LinkGuard
from loadtower.orchestrator.master_output import MasterOutput
from loadtower.orchestrator.worker_list import worker_list
from loadtower.protocol.commands import FailedAck, StartCommand
from loadtower.protocol.heartbeats import reply_every as heartbeat_reply_every
from loadtower.protocol.interval_message import text_problem
from loadtower.protocol.link_secrets import KEY_ENV
from loadtower.protocol.phase_spec import PhaseMessage, RateMessage
from loadtower.protocol.version import PROTOCOL_VERSION, mismatch

OPEN_LANES_PER_WORKER = 4
CONFIGURE_TIMEOUT_S = 120.0
SILENT_S = 3.0  # a worker without a heartbeat for this long is reported silent
NAME_WAIT_S = 2.0  # a new worker is announced once its name is known, or after this long
STOP_RESEND_S = 2.0  # a worker still running this long after a stop is stopped again
PHASE_RESEND_S = 15.0  # a worker that did not confirm a phase this long is sent it again
# `stopped` waits for every phase worker's `stop_done` (sent after its drain): this long
# at most, the drain's bound plus time for the last lines to cross a slow link
STOP_ACK_TIMEOUT_S = DRAIN_TIMEOUT_S + 10.0
STOP_LOOK_S = 0.02  # how often a stop looks whether the workers' users ended
# Locust takes a worker off its list when the worker says it stopped (`client_stopped`)
# and puts it back at the `client_ready` the worker sends right after: a worker off the
# list is counted as there for this long (it is on its way back), then as gone
BACK_WAIT_S = 5.0


OUTPUT_DRAIN_S = 10.0  # at exit: how long the lines still queued may take to be written
_output: MasterOutput | None = None


def output() -> MasterOutput:
    """The master's stdout, written by its own thread (master_output.py)."""
    global _output
    if _output is None:
        _output = MasterOutput()
    return _output


def emit(line: dict[str, Any], urgent: bool = False) -> None:
    """A line to the orchestrator, queued in order (`urgent`: ahead of the queue, for an
    ack that certifies none of the lines before it)."""
    output().put(line, urgent)



EOF_EXIT_S = 10.0  # after stdin closes, stopping the workers may wait on dead links


def _exit_after(seconds: float) -> None:
    time.sleep(seconds)
    output().drain(OUTPUT_DRAIN_S)
    try:
        sys.stdout.flush()
    except (OSError, ValueError):  # the reader is gone: nothing to flush to
        pass
    os._exit(0)


_STATES: list[str] = []  # Locust's stopping, ready, running, spawning: read at the first check


def fleet_stopped(state: str, workers: Collection[Any]) -> bool:
    """Locust's MasterRunner.check_stopped test: the master stopping and every worker
    ready again, or no worker running, spawning or ready. Made after every message, so
    Locust's names are looked up once, not imported each time."""
    if not _STATES:
        import locust.runners as lr

        _STATES[:] = [lr.STATE_STOPPING, lr.STATE_INIT, lr.STATE_RUNNING, lr.STATE_SPAWNING]
    stopping, ready, running, spawning = _STATES
    return (state == stopping and all(x.state == ready for x in workers)) or all(
        x.state not in (running, spawning, ready) for x in workers)


def _guarded_runner(env: Any, host: str, port: int, guard: LinkGuard) -> Any:
    """Locust's master runner that hears only messages signed with the run's link key
    (link_guard.py), also after it resets its server."""
    import locust.runners as lr
    import zmq

    class GuardedMaster(lr.MasterRunner):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            self.clients = worker_list()  # before any worker: the same list, cheaper reads
            self._guard_server()

        def _guard_server(self) -> None:
            guard.wrap(self.server)
            # a worker reconnecting through a new SSH forward takes its identity back at once
            self.server.socket.setsockopt(zmq.ROUTER_HANDOVER, 1)

        def reset_connection(self) -> None:
            super().reset_connection()
            self._guard_server()

        def check_stopped(self) -> None:
            """Locust's own test, which it makes after every message it handles, over the
            workers themselves: its `clients.all` goes through a copy of every worker's
            id each time (a tenth of the master's CPU at a thousand workers)."""
            nodes = getattr(self.clients, "_worker_nodes", None)
            if not isinstance(nodes, dict):  # another Locust: its own way
                super().check_stopped()
                return
            if fleet_stopped(self.state, nodes.values()):
                self.update_state(lr.STATE_STOPPED)

    master_socket.install()  # a bound on what the master holds from each worker
    return env._create_runner(GuardedMaster, master_bind_host=host, master_bind_port=port)


def link_key_from_env() -> bytes:
    """The run's link key, from the master's environment (then removed from it)."""
    value = os.environ.pop(KEY_ENV, "")
    try:
        key = bytes.fromhex(value)
    except ValueError:
        key = b""
    if len(key) < 16:
        raise LoadtowerError(f"the Locust master needs the run's link key (hex, 16 bytes or "
                             f"more) in ${KEY_ENV}")
    return key


class Master:
    def __init__(self, bind: str, expect_workers: int, grace: float = 30.0,
                 key: bytes = b"") -> None:
        import locust.runners as lr

        # Locust marks a worker "missing" after HEARTBEAT_LIVENESS silent seconds and then
        # stops counting its users; a link cut shorter than the grace must not do that.
        # A worker that really died is reported by the orchestrator ("drop") at once.
        lr.HEARTBEAT_LIVENESS = max(lr.HEARTBEAT_LIVENESS, int(grace) + 5)
        host, port = bind.rsplit(":", 1)
        env = ls.Environment(user_classes=[ls.lane_user_class({})])
        self.guard = LinkGuard(key, self._refused, heartbeat_reply_every(grace))
        self.runner = _guarded_runner(env, host, int(port), self.guard)
        self.expect = expect_workers
        self.known: set[str] = set()
        self.phase_workers: set[str] = set()
        self.load_done: set[str] = set()
        self.mode = ""
        self.configured: set[str] = set()
        self.failed = False
        self.commands: queue.Queue[dict | None] = queue.Queue()
        self.agents: dict[str, str] = {}  # agent name (HOST/INDEX) -> Locust worker id
        self.phase_msgs: dict[str, PhaseMessage] = {}
        self.last_seen: dict[str, float] = {}  # worker id -> its last heartbeat
        self.first_seen: dict[str, float] = {}  # worker id -> when the master first saw it
        self.silent: set[str] = set()
        self.lane_rate: float | None = None
        self.phase = ""  # the running phase's name ("" between phases)
        self.stopped_at = 0.0
        self.stop_resent: dict[str, float] = {}
        self.stop_id = 0  # numbers the stops: a worker's stop_done answers one of them
        self.stop_drain_s: float | None = None  # the last stop's drain bound (None: agents')
        self.stop_done: set[str] = set()  # workers that drained for the current stop
        self.ready_at: dict[str, float] = {}  # worker id -> its last client_ready (monotonic)
        self.off_list_since: dict[str, float] = {}  # worker id -> first seen off the list
        self.runner.register_message("lt_line", self._on_line)
        self.runner.register_message("lt_interval", self._on_interval)
        env.events.heartbeat_sent.add_listener(self._on_heartbeat)
        env.events.worker_connect.add_listener(self._on_ready)

    def _on_ready(self, client_id: str, **_kw: Any) -> None:
        self.ready_at[client_id] = time.monotonic()

    def _refused(self, message: str, data: dict[str, Any]) -> None:
        emit({"type": "event", "kind": "link_refused", "ts": time.time(), "message": message,
              **data})

    def _name(self, wid: str) -> str:
        return next((a for a, w in self.agents.items() if w == wid), wid)

    # ---- worker -> master ---------------------------------------------------------------
    def _on_line(self, environment: Any, msg: Any, **_kw: Any) -> None:
        line = msg.data
        kind = line.get("type")
        node = msg.node_id
        writer = line.pop("relay_node", None)  # the follower's own Locust id, when it has one
        if line.pop("relayed", False):  # a follower's line its host's lead sent on
            # counted for the worker that wrote it (agents/host_lines.py), not the lead
            node = str(writer) if writer else self.agents.get(str(line.get("agent")), node)
        elif line.get("agent"):
            self.agents[str(line["agent"])] = node
        if kind == "hello":
            problem = mismatch(f"load worker {line.get('agent') or msg.node_id}",
                               line.get("protocol"))
            if problem is not None:
                self.failed = True
                emit({"type": "event", "kind": "error", "ts": time.time(), "message": problem})
            return
        if kind == "load_done":
            self.load_done.add(node)
            if self.mode == "load" and self.load_done >= self.phase_workers:
                ls.gevent.spawn(self._finish_load)
            return
        if kind == "configured":
            self.configured.add(node)
            return
        if kind == "stop_done":  # the worker drained: its lines of the phase are all out
            if line.get("id") == self.stop_id:
                self.stop_done.add(node)
            return
        if line.get("kind") == "error":
            self.failed = True
        output().wait_for_room(ls.gevent.sleep)  # a backlog held at the workers, said
        emit(line)

    def _on_interval(self, environment: Any, msg: Any, **_kw: Any) -> None:
        """An interval line as its JSON text (protocol/interval_message.py), printed as it
        came: the bulk of a run's lines, never decoded or encoded here."""
        problem = text_problem(msg.data)
        if problem is not None:
            self.failed = True
            emit({"type": "event", "kind": "error", "ts": time.time(),
                  "message": f"load worker {msg.node_id}: {problem}"})
            return
        self.agents[msg.data["agent"]] = msg.node_id
        out = output()
        out.wait_for_room(ls.gevent.sleep)  # a backlog held at the workers, said
        out.put_text(msg.data["text"])

    def _finish_load(self) -> None:
        """Every worker sent load_done, which it sends after its drain (lines, then the
        drain event, then load_done, in order on one link): the load is all on stdout."""
        self.mode = ""
        self._stop()
        emit({"type": "phase_done", "ts": time.time()})

    def _event(self, kind: str, wid: str, message: str, **extra: Any) -> None:
        line = {"type": "event", "kind": kind, "worker": wid, "ts": time.time()}
        emit({**line, "agent": self._name(wid), "message": message, **extra})

    def _watch_workers(self) -> None:
        while True:
            current = {c.id for c in self.runner.clients.all if c.state != "missing"}
            now = time.time()
            joined = set()
            for wid in sorted(current - self.known):
                self.last_seen.setdefault(wid, now)
                first = self.first_seen.setdefault(wid, now)
                if self._name(wid) == wid and now - first < NAME_WAIT_S:
                    continue  # its hello (HOST/INDEX) is on its way: announce it by name
                self._event("worker_joined", wid, f"load worker {wid} joined")
                joined.add(wid)
            for wid in sorted(self.known - current):
                self._event("worker_left", wid, f"load worker {self._name(wid)} left the master")
                self.first_seen.pop(wid, None)
            self.known = (self.known & current) | joined
            for wid in current - self.silent:
                gap = now - self.last_seen.get(wid, now)
                if gap > SILENT_S:
                    self.silent.add(wid)
                    self._event(
                        "worker_silent",
                        wid,
                        f"load worker {self._name(wid)} silent for {gap:.0f} s (link cut?)",
                    )
            ls.gevent.sleep(0.2)

    def _on_heartbeat(self, client_id: str, timestamp: float, **_kw: Any) -> None:
        previous = self.last_seen.get(client_id)
        self.last_seen[client_id] = timestamp
        if client_id in self.silent or (previous and timestamp - previous > SILENT_S):
            self.silent.discard(client_id)
            gap = timestamp - previous if previous else 0.0
            self._event(
                "worker_back",
                client_id,
                f"load worker {self._name(client_id)} answers again after {gap:.1f} s",
            )
            ls.gevent.spawn(self._resync, client_id)
        elif not self.mode and timestamp - self.stopped_at > STOP_RESEND_S:
            # still running long after a stop: the stop was lost on a link that dropped
            client = self.runner.clients.get(client_id)
            last = self.stop_resent.get(client_id, 0.0)
            if client is not None and client.state in ("running", "spawning"):
                if timestamp - last > STOP_RESEND_S:
                    self.stop_resent[client_id] = timestamp
                    ls.gevent.spawn(self._resync, client_id)

    def _resync(self, wid: str) -> None:
        """Bring a worker that was cut off in step with what it missed."""
        client = self.runner.clients.get(wid)
        if client is None:
            return
        if not self.mode:  # the stop it missed, under its number: its stop_done counts
            self.runner.send_message("lt_stop", self._stop_message(), client_id=wid)
            if client.state in ("running", "spawning"):
                from locust.rpc import Message

                self.runner.server.send_to_client(Message("stop", None, wid))
        elif wid in self.phase_workers and wid not in self.configured and wid in self.phase_msgs:
            self.runner.send_message("lt_phase", dict(self.phase_msgs[wid]), client_id=wid)
        elif self.runner.state in ("running", "spawning") and self.runner.spawning_completed:
            self.runner.start(self.runner.target_user_count, self.runner.spawn_rate)

    def _drop(self, agents: list[str]) -> None:
        """The orchestrator found these agents gone: forget them, re-split their users."""
        dropped = []
        for agent in agents:
            wid = self.agents.get(agent)
            client = self.runner.clients.get(wid) if wid else None
            if wid is None or client is None:
                continue
            del self.runner.clients[wid]
            if self.runner._users_dispatcher is not None:
                self.runner._users_dispatcher.remove_worker(client)
            self.phase_workers.discard(wid)
            self.known.discard(wid)
            dropped.append(agent)
        remaining = [c for c in self.runner.clients.all if c.state != "missing"]
        if not dropped:
            return
        if not remaining:
            emit(
                {
                    "type": "event",
                    "kind": "warning",
                    "ts": time.time(),
                    "message": f"no load worker left after losing {', '.join(dropped)}",
                }
            )
            return
        if self.mode == "load" and self.load_done >= self.phase_workers:
            ls.gevent.spawn(self._finish_load)
        elif self.mode and self.runner.state in ("running", "spawning"):
            users = self.runner.target_user_count
            ls.gevent.spawn(self.runner.start, users, self.runner.spawn_rate)
            lane_rate = self.lane_rate
            emit(
                {
                    "type": "event",
                    "kind": "rebalanced",
                    "ts": time.time(),
                    "agents": dropped,
                    "workers": len(remaining),
                    "users": users,
                    "message": f"{users} users re-split over {len(remaining)} remaining workers "
                    f"after losing {', '.join(dropped)}"
                    + (f" (total rate kept at {users * lane_rate:g} ops/s)" if lane_rate else ""),
                }
            )

    # ---- orchestrator -> master ----------------------------------------------------------
    def _read_stdin(self) -> None:
        for raw in sys.stdin:
            raw = raw.strip()
            if raw:
                try:
                    self.commands.put(json.loads(raw))
                except ValueError:
                    emit({"type": "event", "kind": "error", "message": f"bad command: {raw[:200]}"})
        self.commands.put(None)

    def _start(self, cmd: StartCommand) -> None:
        problem = mismatch("the orchestrator", cmd.get("protocol"))
        if problem is not None:
            failed: FailedAck = {"type": "failed", "ts": time.time(), "message": problem}
            emit(dict(failed))
            return
        workers = sorted(c.id for c in self.runner.clients.all if c.state != "missing")
        if not workers:
            emit({"type": "event", "kind": "error", "message": "no load worker connected"})
            return
        mode = cmd.get("mode", "run")
        rate = cmd.get("rate")
        if mode == "load":
            users = max(int(cmd.get("concurrency") or 64), len(workers))
        elif rate:
            users = len(workers) * OPEN_LANES_PER_WORKER
        else:
            users = max(int(cmd.get("users") or 1), 1)
        spec = cmd["spec"]
        driver = cmd.get("driver") or spec.get("target", {}).get("driver", "auto")
        self.lane_rate = (float(rate) / users) if rate and mode != "load" else None
        self.phase_msgs = {}
        for index, wid in enumerate(workers):
            self.phase_msgs[wid] = {
                "protocol": PROTOCOL_VERSION,
                "phase": cmd.get("phase", ""),
                "mode": mode,
                "spec": spec,
                "contact_points": cmd["contact_points"],
                "port": int(port) if (port := cmd.get("port")) else None,  # None: engine's
                "username": cmd.get("username"),
                # the name of the file on the agent host holding the password: the
                # orchestrator took it out of the command (protocol/link_secrets.py)
                "password_ref": cmd.get("password_ref"),
                "driver": driver,
                "worker_index": index,
                "worker_count": len(workers),
                "lane_rate": self.lane_rate,
                "think_time": float(cmd.get("think_time") or 0.0),
                "records": int(cmd.get("records") or 0),
                "max_in_flight": int(cmd.get("max_in_flight") or 128),
                "seed": cmd.get("seed"),
            }
            self.runner.send_message("lt_phase", dict(self.phase_msgs[wid]), client_id=wid)
        self.configured, self.failed = set(), False
        self.mode, self.phase_workers, self.load_done = mode, set(workers), set()
        self.phase = str(cmd.get("phase", ""))
        ls.gevent.spawn(self._start_users, users, len(workers), self.stop_id)

    def _start_users(self, users: int, workers: int, stop_id: int) -> None:
        """Start the users once every worker is connected and prepared (or report why not);
        never after a stop that came meanwhile (`stop_id` is the last stop before it)."""
        deadline = time.monotonic() + CONFIGURE_TIMEOUT_S
        resend_at = time.monotonic() + PHASE_RESEND_S
        while not self.configured >= self.phase_workers or self.stop_id != stop_id:
            if self.stop_id != stop_id:
                emit({"type": "failed", "ts": time.time(),
                      "message": "the load was stopped before it started"})
                return
            if time.monotonic() > resend_at:  # a phase message lost on a link that dropped
                resend_at = time.monotonic() + PHASE_RESEND_S
                for wid in self.phase_workers - self.configured:
                    if wid in self.phase_msgs and wid not in self.silent:
                        self.runner.send_message("lt_phase", dict(self.phase_msgs[wid]), client_id=wid)
            if self.failed or time.monotonic() > deadline:
                missing = sorted(self._name(w) for w in self.phase_workers - self.configured)
                emit(
                    {
                        "type": "failed",
                        "ts": time.time(),
                        "message": "load workers could not prepare the phase"
                        + (f" (no answer from {', '.join(missing)})" if not self.failed else ""),
                    }
                )
                return
            ls.gevent.sleep(0.02)
        self.runner.start(users, spawn_rate=min(users, 90 * workers))
        # ahead of the lines queued (it certifies none of them), so a backlog does not
        # delay it; `stopped` and `phase_done` stay behind the lines they certify
        emit({"type": "started", "ts": time.time(), "users": users}, urgent=True)

    def steer(self, kind: str, value: float) -> None:
        """`rate`: the running open-model phase's new total rate, split over its users as
        at its start (`lt_rate` to every worker; a worker that resyncs later gets it in
        its phase message); `users`: the closed model's new number of users, spawned or
        stopped by Locust. Anything else (no phase, a load, the other model) is a
        warning event (the orchestrator checks before it sends: a race with the phase's
        end)."""
        running = self.mode == "run" and self.runner.state in ("running", "spawning")
        if kind == "rate" and running and self.lane_rate and value > 0:
            users = self.runner.target_user_count
            self.lane_rate = value / users
            for message in self.phase_msgs.values():
                message["lane_rate"] = self.lane_rate
            rate: RateMessage = {"phase": self.phase, "lane_rate": self.lane_rate}
            self.runner.send_message("lt_rate", dict(rate))
        elif kind == "users" and running and not self.lane_rate and value >= 1:
            users = int(value)
            workers = len([c for c in self.runner.clients.all if c.state != "missing"])
            self.runner.start(users, spawn_rate=min(users, 90 * max(workers, 1)))
        else:
            model = "open" if kind == "rate" else "closed"
            emit({"type": "event", "kind": "warning", "ts": time.time(),
                  "message": f"cannot steer {kind} to {value:g}: no {model}-model run phase "
                  "is running"})

    def _stop(self, drain_s: float | None = None) -> None:
        self.stopped_at = time.time()
        self.stop_id += 1
        self.stop_drain_s = drain_s
        self.stop_done = set()
        self.runner.send_message("lt_stop", self._stop_message())
        if self.runner.state not in ("ready", "stopped", "stopping"):
            self._stop_users()

    def _stop_users(self) -> None:
        """Locust's master stop (MasterRunner.stop: the state `stopping` and its events, a
        `stop` to every worker, a wait until no worker reports a user), with two changes:
        the wait looks every STOP_LOOK_S (Locust's looks once a second, so every phase,
        search step and ramp step ended a second after its workers did), and it also waits
        until each worker it stopped is back on Locust's list (its `client_ready` after
        its `client_stopped`), which Locust's second-long look gave by chance: the next
        phase's start counts the workers on the list. Bounded as Locust bounds its wait
        (its stop_timeout + 60 s); a worker not back within BACK_WAIT_S is not waited for."""
        runner = self.runner
        stopping = {c.id for c in runner.clients.all if c.state != "missing"}
        sent_at = time.monotonic()
        runner.stop(send_stop_to_client=False)  # the state and its events; it sends nothing
        for wid in stopping:
            runner.server.send_to_client(ls.Message("stop", None, wid))
        deadline = sent_at + (runner.environment.stop_timeout or 0) + 60
        while time.monotonic() < deadline:
            back = {w for w in stopping if self.ready_at.get(w, 0.0) > sent_at}
            lost = {c.id for c in runner.clients.all if c.state == "missing"}
            late = time.monotonic() - sent_at > BACK_WAIT_S
            if runner.user_count == 0 and (late or stopping <= back | lost):
                return
            ls.gevent.sleep(STOP_LOOK_S)

    def _stop_message(self) -> dict[str, Any]:
        """`lt_stop`: the stop's number, and its drain bound when the stop gave one."""
        if self.stop_drain_s is None:
            return {"id": self.stop_id}
        return {"id": self.stop_id, "drain_s": self.stop_drain_s}

    def stop_command(self, drain_s: float | None = None) -> None:
        """`stop`: the load stops; `stopped` once every worker printed the phase's lines.
        With `drain_s` (an operator's stop) the agents wait that long at most for their
        ops in flight, and the ack waits for that plus the link's margin."""
        self.mode = ""
        self._stop(drain_s)
        margin = STOP_ACK_TIMEOUT_S - DRAIN_TIMEOUT_S
        self._await_drained(STOP_ACK_TIMEOUT_S if drain_s is None else drain_s + margin)
        emit({"type": "stopped", "ts": time.time()})

    def _await_drained(self, timeout: float = STOP_ACK_TIMEOUT_S) -> None:
        """Wait until every worker of the phase answered the last stop with `stop_done`.
        A worker sends it after its drain, on the same ordered link as its interval lines
        and drain event, and this process prints lines as they arrive: so once all
        answered, every line of the phase is on stdout. Workers gone (dropped, or
        missing to Locust) are not waited for; silent ones for `timeout` at most."""
        deadline = time.monotonic() + timeout
        while True:
            waiting = (self.phase_workers & self._answering()) - self.stop_done
            if not waiting:
                return
            if time.monotonic() > deadline:
                names = ", ".join(sorted(self._name(w) for w in waiting))
                emit(
                    {
                        "type": "event",
                        "kind": "warning",
                        "ts": time.time(),
                        "message": f"no drain report from {names} within {timeout:g} s: "
                        "lines of the phase may still come after this acknowledgement",
                    }
                )
                return
            ls.gevent.sleep(0.02)

    def _answering(self) -> set[str]:
        """The workers that may still answer: on Locust's list and not missing, or off
        it for less than BACK_WAIT_S (between its client_stopped and client_ready)."""
        now = time.monotonic()
        listed = {c.id: c.state for c in self.runner.clients.all}
        for wid in listed:
            self.off_list_since.pop(wid, None)
        off = {w for w in self.phase_workers if w not in listed}
        for wid in off:
            self.off_list_since.setdefault(wid, now)
        back_soon = {w for w in off if now - self.off_list_since[w] < BACK_WAIT_S}
        return {w for w, state in listed.items() if state != "missing"} | back_soon

    def serve(self) -> int:
        # a terminal's Ctrl-C reaches the whole process group, this child of the run too:
        # the master obeys its orchestrator only, which stops the load at once (its stop)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        threading.Thread(target=self._read_stdin, daemon=True).start()
        ls.gevent.spawn(self._watch_workers)
        while True:
            try:
                cmd = self.commands.get_nowait()
            except queue.Empty:
                ls.gevent.sleep(0.05)
                continue
            if cmd is None or cmd.get("cmd") == "quit":
                if cmd is None:  # the orchestrator is gone: never linger behind it
                    threading.Thread(target=_exit_after, args=(EOF_EXIT_S,), daemon=True).start()
                break
            if cmd.get("cmd") == "start":
                self._start(cast(StartCommand, cmd))  # JSON from stdin: the `cmd` tag
            elif cmd.get("cmd") == "stop":
                drain_s = cmd.get("drain_s")
                self.stop_command(float(drain_s) if drain_s is not None else None)
            elif cmd.get("cmd") == "drop":
                self._drop([str(a) for a in cmd.get("agents") or []])
            elif cmd.get("cmd") in ("rate", "users"):
                kind = str(cmd["cmd"])
                self.steer(kind, float(cmd.get(kind) or 0))
        self._stop()
        self._await_drained()  # the workers' last lines
        ls.gevent.sleep(0.2)
        self.runner.quit()
        ls.gevent.sleep(0.5)
        output().drain(OUTPUT_DRAIN_S)
        return 0
