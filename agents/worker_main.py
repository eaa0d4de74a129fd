"""`loadtower agent worker`: Locust worker processes that run the load engine.

One command per agent host starts ``--processes K`` worker processes (0 = one per
core); each connects to the Locust master (through the SSH reverse forward the
orchestrator set up) and forwards its engine's interval lines to the master.

Reliability (docs/orchestrator.md, "Faults"): with ``--spool-dir`` every interval and
event line is numbered and written to the spool file before it is sent, so the
orchestrator can backfill what a broken link lost. A worker that hears nothing from
the master for ``--grace`` seconds stops its load and exits by itself, and the worker
processes die with the command that started them: no load is left orphaned.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import sys
import time
from typing import Any

from loadtower.agents import locust_setup as ls
from loadtower.agents.driver_loop import DriverLoop, PhaseConfig
from loadtower.agents.host_lines import TICK_S, Follower, MergingLead, host_link
from loadtower.agents.link_client import sign_client
from loadtower.agents.secret_dir import link_key, read_secret
from loadtower.agents.spool import Spool
from loadtower.agents.worker_supervisor import DEFAULT_GRACE_S, PARENT_ENV
from loadtower.errors import LoadtowerError
from loadtower.protocol.heartbeats import reply_every as heartbeat_reply_every
from loadtower.protocol.interval_message import interval_message
from loadtower.protocol.lines import EventLine, HelloLine
from loadtower.protocol.link_secrets import resolve_secrets
from loadtower.protocol.phase_spec import PhaseMessage
from loadtower.protocol.version import PROTOCOL_VERSION, mismatch

PR_SET_PDEATHSIG = 1
LINK_CLOSE_S = 5.0  # a follower's wait, at its end, for its lead to send on its lines


def _die_with_parent() -> None:
    """Linux: SIGTERM this process when the command that started it dies (and end now if
    it died while this process was still importing)."""
    with contextlib.suppress(Exception):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
    parent = os.environ.get(PARENT_ENV)
    if parent and parent.isdigit() and os.getppid() != int(parent):
        sys.exit(1)


def _connect(env: Any, host: str, port: int, handlers: dict[str, Any], ref: dict,
             key: bytes) -> Any:
    """The Locust worker runner, with our message handlers registered *before* it
    connects (the master may send the phase as soon as it sees the worker), signing
    every message it sends with the run's link key (agents/link_client.py)."""
    from locust.runners import WorkerRunner
    from locust.stats import RequestStats

    env.stats = RequestStats(use_response_times_cache=False)  # as create_worker_runner does

    class Worker(WorkerRunner):
        def connect_to_master(self) -> None:
            ref["runner"] = self
            for name, handler in handlers.items():
                if name not in self.custom_messages:
                    self.register_message(name, handler)
            sign_client(self.client, key, self.client_id)
            super().connect_to_master()

        def reset_connection(self) -> None:
            super().reset_connection()
            sign_client(self.client, key, self.client_id)

    return env._create_runner(Worker, master_host=host, master_port=port)


def phase_refusal(agent: str, data: PhaseMessage) -> EventLine | None:
    """The error event a worker sends instead of starting a phase message of another
    protocol version; None when the versions match."""
    problem = mismatch("the Locust master", data.get("protocol"))
    if problem is None:
        return None
    return {"type": "event", "kind": "error", "ts": time.time(),
            "message": f"agent {agent}: {problem}"}


def run_worker(
    master: str,
    host_name: str,
    index: int,
    spool_dir: str | None = None,
    grace: float = DEFAULT_GRACE_S,
    secret_dir: str = "",
    merge: bool = False,
) -> int:
    _die_with_parent()
    try:  # the run's private directory on this host (agents/secret_dir.py)
        key = link_key(secret_dir)
    except (LoadtowerError, ValueError) as exc:
        print(f"loadtower agent worker: no link key: {exc}", file=sys.stderr)
        return 2
    import locust.runners as lr

    # our own watchdog (below) acts after `grace`; Locust's must not quit earlier
    lr.MASTER_HEARTBEAT_TIMEOUT = max(lr.MASTER_HEARTBEAT_TIMEOUT, int(grace) + 30)
    host, port = master.rsplit(":", 1)
    agent = f"{host_name}/{index}"
    spool = Spool(spool_dir, index, agent) if spool_dir else None
    ref: dict[str, Any] = {}
    env = ls.Environment(user_classes=[ls.lane_user_class(ref)])
    engine = DriverLoop(agent, host_name)
    ref["engine"] = engine
    engine.start()

    def direct(line: dict[str, Any], text: str | None) -> None:
        """One line on this worker's own link to the master."""
        try:
            if line.get("type") == "interval":  # the bulk: its JSON text, printed as is
                name = str(line.get("agent") or agent)
                ref["runner"].send_message("lt_interval", interval_message(name, line, text))
            else:
                ref["runner"].send_message("lt_line", line)
        except Exception:  # noqa: BLE001 - the link is down: the spool has the line
            pass

    link = host_link(merge, spool_dir, index, host_name, agent, direct)

    def send(line: dict[str, Any]) -> None:
        line.setdefault("agent", agent)
        text = spool.number(line) if spool is not None else None
        if link is not None:  # the host merges its workers' seconds (agents/host_lines.py)
            link.send(line, text)
        else:
            direct(line, text)

    def on_phase(environment: Any, msg: Any, **_kw: Any) -> None:
        data: PhaseMessage = msg.data
        refusal = phase_refusal(agent, data)
        if refusal is not None:  # the phase is not started: its fields may mean otherwise
            engine.out(refusal)
            return
        try:  # the secrets the message names, from this host's 0600 files
            resolved = resolve_secrets(dict(data), lambda name: read_secret(secret_dir, name))
        except (LoadtowerError, OSError, UnicodeDecodeError) as exc:
            engine.out({"type": "event", "kind": "error", "ts": time.time(),
                        "message": f"agent {agent}: the phase's secrets: {exc}"})
            return
        pending = ref.get("configuring")
        if pending is not None and not pending[1].done() and pending[0] == msg.data:
            return  # the master sent it again while this one is still being prepared
        if ref["runner"].user_count:  # users of a phase whose stop was lost on a dropped link
            ref["runner"].stop()
        cfg = PhaseConfig.from_message(resolved)
        future = engine.submit(engine.configure(cfg))
        ref["configuring"] = (msg.data, future)

        def report() -> None:
            while not future.done():
                ls.gevent.sleep(0.05)
            exc = future.exception()
            # through the engine's queue: after the previous phase's lines and drain event
            if exc is not None:
                engine.out(
                    {
                        "type": "event",
                        "kind": "error",
                        "ts": time.time(),
                        "message": f"agent {agent}: {type(exc).__name__}: {exc}",
                    }
                )
            else:
                engine.out({"type": "configured"})

        ls.gevent.spawn(report)

    def on_stop(environment: Any, msg: Any, **_kw: Any) -> None:
        # drains the phase (an operator's stop: within its `drain_s`); its `stop_done`
        # follows the phase's lines in the same queue
        data = msg.data or {}
        drain_s = data.get("drain_s")
        engine.submit(engine.stop_phase(data.get("id"),
                                        float(drain_s) if drain_s is not None else None))

    def on_rate(environment: Any, msg: Any, **_kw: Any) -> None:
        # the running open-model phase's new rate per lane (a user): the schedule changes
        # from its next op; a phase of another name (already over here) is left alone
        data = msg.data or {}
        with contextlib.suppress(KeyError, TypeError, ValueError):
            engine.submit(engine.set_lane_rate(str(data["phase"]), float(data["lane_rate"])))

    handlers = {"lt_phase": on_phase, "lt_stop": on_stop, "lt_rate": on_rate}
    runner = _connect(env, host, int(port), handlers, ref, key)
    if isinstance(link, Follower):  # its relayed lines name it (the master counts by it)
        link.node = str(runner.client_id)
    if link is not None:
        try:
            link.start()
        except (OSError, ValueError, LoadtowerError) as exc:  # each worker sends its own
            engine.out({"type": "event", "kind": "warning", "ts": time.time(),
                        "message": f"agent {agent}: its host's lines are not merged: {exc}"})
            link = None
    hello: HelloLine = {"type": "hello", "agent": agent, "pid": os.getpid(),
                        "protocol": PROTOCOL_VERSION}
    send(dict(hello))
    exit_reason = {"reason": "stopped by the master"}

    def pump() -> None:
        while True:
            try:
                line = engine.out_queue.get_nowait()
            except Exception:  # noqa: BLE001 - queue.Empty
                ls.gevent.sleep(0.05)
                continue
            send(dict(line))

    # the master answers heartbeats once per `spacing` at most: its last answer can be
    # that old when a cut starts, and a cut shorter than the grace must not stop the load
    spacing = heartbeat_reply_every(grace)

    def watchdog() -> None:
        """Stop the load when the master (the orchestrator) has been silent for `grace`."""
        while True:
            ls.gevent.sleep(0.5)
            last = runner.last_heartbeat_timestamp
            if last is None or time.time() - last <= grace + spacing:
                continue
            engine.stop_lanes()
            exit_reason["reason"] = (
                f"stopped its load by itself: no word from the orchestrator for {grace:g} s"
            )
            send(
                {
                    "type": "event",
                    "kind": "agent_orphaned",
                    "ts": time.time(),
                    "host": host_name,
                    "message": f"load agent {agent} {exit_reason['reason']}",
                }
            )
            runner.greenlet.kill(block=False)
            return

    def tick() -> None:
        while isinstance(link, MergingLead):
            ls.gevent.sleep(TICK_S)
            link.tick()

    pumper = ls.gevent.spawn(pump)
    guard = ls.gevent.spawn(watchdog)
    ticker = ls.gevent.spawn(tick)
    try:
        runner.greenlet.join()
    finally:
        guard.kill()
        engine.shutdown()
        while not engine.out_queue.empty():
            send(dict(engine.out_queue.get_nowait()))
        pumper.kill()
        ticker.kill()
        if isinstance(link, MergingLead):
            link.close()
        elif link is not None:
            link.close(LINK_CLOSE_S)
        if spool is not None:
            spool.exited(exit_reason["reason"])
            spool.close()
    return 0
