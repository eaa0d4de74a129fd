"""`loadtower agent worker` without `--index`: the command that starts an agent host's
Locust worker processes (`--processes K`, 0 = one per core) and waits for them.

It imports no Locust and no load engine: it only starts `agent worker --index I`
children (worker_main.py, the ones that load Locust, gevent and the load core),
forwards the signals it gets to them and reaps them. Every run starts one per agent
host, and that import cost about a CPU-second there for nothing (docs/testing.md).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from typing import Any

DEFAULT_GRACE_S = 30.0
# set in each child's environment: the supervisor's pid, which the child checks it still
# has as its parent once it has set its parent-death signal (worker_main._die_with_parent)
PARENT_ENV = "LOADTOWER_WORKER_PARENT"


def run_workers(
    master: str,
    host_name: str,
    processes: int,
    index: int | None,
    spool_dir: str | None = None,
    grace: float = DEFAULT_GRACE_S,
    secret_dir: str = "",
    merge: bool = False,
) -> int:
    """Start ``processes`` workers (children of this command) and wait for them; with
    ``index``, be that worker (worker_main.py, imported only then). ``merge``: the workers
    send one interval line per second for the host, through worker 0 (host_lines.py)."""
    if index is not None:
        from loadtower.agents.worker_main import run_worker

        return run_worker(master, host_name, index, spool_dir, grace, secret_dir, merge)
    count = processes or os.cpu_count() or 1
    extra = ["--grace", str(grace), "--secret-dir", secret_dir]
    extra += ["--spool-dir", spool_dir] if spool_dir else []
    extra += ["--merge"] if merge and count > 1 else []
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
                *extra,
            ],
            env={**os.environ, PARENT_ENV: str(os.getpid())},
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
    # reap each child as soon as it ends (a killed worker must not linger as a zombie)
    while any(child.poll() is None for child in children):
        time.sleep(0.2)
    status = 0
    for child in children:
        status = child.returncode or status
    return status
