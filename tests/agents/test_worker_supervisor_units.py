"""`loadtower agent worker` without `--index` (agents/worker_supervisor.py) starts the
worker processes and waits for them, without loading Locust, gevent or the load engine
itself (each run starts one per agent host; that import was a CPU-second for nothing)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HEAVY = ("locust", "gevent", "zmq", "loadtower.agents.worker_main", "loadtower.agents.driver_loop")


def test_the_supervisor_loads_none_of_the_workers_libraries() -> None:
    probe = (
        "import sys, loadtower.agents.worker_command, loadtower.agents.worker_supervisor\n"
        f"print(sorted(m for m in sys.modules if m.split('.')[0] in {HEAVY!r} or m in {HEAVY!r}))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         timeout=120, check=True).stdout  # fmt: skip
    assert out.strip() == "[]"


def test_it_starts_each_worker_and_exits_with_their_status(tmp_path: Path) -> None:
    # no link key in the secret directory: each worker says so and exits 2 (before it
    # loads Locust), and the supervisor ends with that status once both have ended
    argv = [sys.executable, "-m", "loadtower", "agent", "worker", "--master", "127.0.0.1:9",
            "--host-name", "agent1", "--processes", "2", "--grace", "1",
            "--secret-dir", str(tmp_path / "missing")]  # fmt: skip
    done = subprocess.run(argv, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 2
    assert done.stderr.count("loadtower agent worker: no link key") == 2
