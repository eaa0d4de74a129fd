"""`loadtower agent master`: the Locust master, driven by JSON commands on stdin.

Commands (one JSON object per line): ``start`` (a phase: spec, mode, rate/users,
records, concurrency, connection), ``stop``, ``quit``. Output on stdout, one JSON
object per line: every worker's interval lines, events (``worker_joined``,
``worker_lost``, errors), ``phase_done`` when a load phase inserted everything,
``stopped`` after a stop. Workers reach the master through SSH reverse forwards.
"""

from __future__ import annotations

import json
import os
import queue
import sys
import threading
import time
from typing import Any

from loadtower.agents import locust_setup as ls

OPEN_LANES_PER_WORKER = 4
CONFIGURE_TIMEOUT_S = 120.0


def emit(line: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(line, separators=(",", ":")) + "\n")
    sys.stdout.flush()


class Master:
    def __init__(self, bind: str, expect_workers: int) -> None:
        host, port = bind.rsplit(":", 1)
        env = ls.Environment(user_classes=[ls.lane_user_class({})])
        self.runner = env.create_master_runner(host, int(port))
        self.expect = expect_workers
        self.known: set[str] = set()
        self.phase_workers: set[str] = set()
        self.load_done: set[str] = set()
        self.mode = ""
        self.configured: set[str] = set()
        self.failed = False
        self.commands: queue.Queue[dict | None] = queue.Queue()
        self.runner.register_message("lt_line", self._on_line)

    # ---- worker -> master ---------------------------------------------------------------
    def _on_line(self, environment: Any, msg: Any, **_kw: Any) -> None:
        line = msg.data
        kind = line.get("type")
        if kind == "load_done":
            self.load_done.add(msg.node_id)
            if self.mode == "load" and self.load_done >= self.phase_workers:
                ls.gevent.spawn(self._finish_load)
            return
        if kind == "configured":
            self.configured.add(msg.node_id)
            return
        if line.get("kind") == "error":
            self.failed = True
        emit(line)

    def _finish_load(self) -> None:
        self.mode = ""
        self._stop()
        emit({"type": "phase_done", "ts": time.time()})

    def _watch_workers(self) -> None:
        while True:
            current = {c.id for c in self.runner.clients.all if c.state != "missing"}
            for wid in sorted(current - self.known):
                emit(
                    {
                        "type": "event",
                        "kind": "worker_joined",
                        "worker": wid,
                        "ts": time.time(),
                        "message": f"load worker {wid} joined",
                    }
                )
            for wid in sorted(self.known - current):
                emit(
                    {
                        "type": "event",
                        "kind": "worker_lost",
                        "worker": wid,
                        "ts": time.time(),
                        "message": f"load worker {wid} lost",
                    }
                )
            self.known = current
            ls.gevent.sleep(0.2)

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

    def _start(self, cmd: dict[str, Any]) -> None:
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
        for index, wid in enumerate(workers):
            self.runner.send_message(
                "lt_phase",
                {
                    "phase": cmd.get("phase", ""),
                    "mode": mode,
                    "spec": spec,
                    "contact_points": cmd["contact_points"],
                    "port": int(cmd.get("port") or 9042),
                    "username": cmd.get("username"),
                    "password": cmd.get("password") or os.environ.get("LOADTOWER_DB_PASSWORD"),
                    "driver": driver,
                    "worker_index": index,
                    "worker_count": len(workers),
                    "lane_rate": (float(rate) / users) if rate and mode != "load" else None,
                    "think_time": float(cmd.get("think_time") or 0.0),
                    "records": int(cmd.get("records") or 0),
                    "max_in_flight": int(cmd.get("max_in_flight") or 128),
                    "seed": cmd.get("seed"),
                },
                client_id=wid,
            )
        self.configured, self.failed = set(), False
        self.mode, self.phase_workers, self.load_done = mode, set(workers), set()
        ls.gevent.spawn(self._start_users, users, len(workers))

    def _start_users(self, users: int, workers: int) -> None:
        """Start the users once every worker is connected and prepared (or report why not)."""
        deadline = time.monotonic() + CONFIGURE_TIMEOUT_S
        while not self.configured >= self.phase_workers:
            if self.failed or time.monotonic() > deadline:
                missing = sorted(self.phase_workers - self.configured)
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
        emit({"type": "started", "ts": time.time(), "users": users})

    def _stop(self) -> None:
        self.runner.send_message("lt_stop", {})
        if self.runner.state not in ("ready", "stopped"):
            self.runner.stop()

    def serve(self) -> int:
        threading.Thread(target=self._read_stdin, daemon=True).start()
        ls.gevent.spawn(self._watch_workers)
        while True:
            try:
                cmd = self.commands.get_nowait()
            except queue.Empty:
                ls.gevent.sleep(0.05)
                continue
            if cmd is None or cmd.get("cmd") == "quit":
                break
            if cmd.get("cmd") == "start":
                self._start(cmd)
            elif cmd.get("cmd") == "stop":
                self.mode = ""
                self._stop()
                emit({"type": "stopped", "ts": time.time()})
        self._stop()
        ls.gevent.sleep(1.5)  # let the workers flush their last intervals
        self.runner.quit()
        ls.gevent.sleep(0.5)
        return 0
