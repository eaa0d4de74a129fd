"""`loadtower agent worker`: Locust worker processes that run the load engine.

One command per agent host starts ``--processes K`` worker processes (0 = one per
core); each connects to the Locust master (through the SSH reverse forward the
orchestrator set up) and forwards its engine's interval lines to the master.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from typing import Any

from loadtower.agents import locust_setup as ls
from loadtower.agents.engine import Engine, PhaseConfig


def run_worker(master: str, host_name: str, index: int) -> int:
    host, port = master.rsplit(":", 1)
    ref: dict[str, Any] = {}
    env = ls.Environment(user_classes=[ls.lane_user_class(ref)])
    runner = env.create_worker_runner(host, int(port))
    agent = f"{host_name}/{index}"
    engine = Engine(agent, host_name)
    ref["engine"] = engine
    engine.start()

    def on_phase(environment: Any, msg: Any, **_kw: Any) -> None:
        cfg = PhaseConfig(**msg.data)
        future = engine.submit(engine.configure(cfg))

        def report() -> None:
            while not future.done():
                ls.gevent.sleep(0.05)
            exc = future.exception()
            if exc is not None:
                runner.send_message(
                    "lt_line",
                    {
                        "type": "event",
                        "kind": "error",
                        "ts": time.time(),
                        "agent": agent,
                        "message": f"agent {agent}: {type(exc).__name__}: {exc}",
                    },
                )
            else:
                runner.send_message("lt_line", {"type": "configured", "agent": agent})

        ls.gevent.spawn(report)

    def on_stop(environment: Any, msg: Any, **_kw: Any) -> None:
        engine.stop_lanes()

    runner.register_message("lt_phase", on_phase)
    runner.register_message("lt_stop", on_stop)

    def pump() -> None:
        while True:
            try:
                line = engine.out_queue.get_nowait()
            except Exception:  # noqa: BLE001 - queue.Empty
                ls.gevent.sleep(0.05)
                continue
            line.setdefault("agent", agent)
            runner.send_message("lt_line", line)

    pumper = ls.gevent.spawn(pump)
    try:
        runner.greenlet.join()
    finally:
        engine.shutdown()
        while not engine.out_queue.empty():
            runner.send_message("lt_line", engine.out_queue.get_nowait())
        pumper.kill()
    return 0


def run_workers(master: str, host_name: str, processes: int, index: int | None) -> int:
    """Start ``processes`` workers (children of this command) and wait for them."""
    if index is not None:
        return run_worker(master, host_name, index)
    count = processes or os.cpu_count() or 1
    children = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "loadtower",
                "agent",
                "worker",
                "--master",
                master,
                "--host-name",
                host_name,
                "--index",
                str(i),
            ]
        )
        for i in range(count)
    ]

    def forward(signum: int, _frame: Any) -> None:
        for child in children:
            if child.poll() is None:
                child.send_signal(signum)

    signal.signal(signal.SIGTERM, forward)
    signal.signal(signal.SIGINT, forward)
    signal.signal(signal.SIGHUP, forward)
    status = 0
    for child in children:
        status = child.wait() or status
    return status
