"""Helpers: run `loadtower agent run --json` against the sandbox and parse its lines."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from typing import Any


def agent_argv(sandbox: dict, *extra: str) -> list[str]:
    cass = sandbox["cassandra"]
    return [
        sys.executable,
        "-m",
        "loadtower",
        "agent",
        "run",
        "--contact-points",
        ",".join(cass["contact_points"]),
        "--port",
        str(cass["port"]),
        "--username",
        cass["username"],
        "--password-env",
        "LT_TEST_PW",
        "--json",
        *extra,
    ]


def agent_env(sandbox: dict) -> dict[str, str]:
    return {**os.environ, "LT_TEST_PW": sandbox["cassandra"]["password"]}


def run_agent(
    sandbox: dict, *extra: str, timeout: float = 300, on_line: Callable[[dict], None] | None = None
) -> tuple[list[dict], dict, int]:
    """Run the agent; return (lines, summary, exit status). Killed on timeout."""
    proc = subprocess.Popen(
        agent_argv(sandbox, *extra),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=agent_env(sandbox),
    )
    lines: list[dict] = []
    stderr: list[str] = []
    err_thread = threading.Thread(target=lambda: stderr.extend(proc.stderr), daemon=True)
    err_thread.start()
    timer = threading.Timer(timeout, proc.kill)
    timer.start()
    try:
        assert proc.stdout is not None
        for raw in proc.stdout:
            line = json.loads(raw)
            lines.append(line)
            if on_line:
                on_line(line)
        status = proc.wait(timeout=30)
    finally:
        timer.cancel()
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
    summary = lines[-1].get("summary") if lines else None
    assert summary is not None, "no summary line; stderr:\n" + "".join(stderr)[-3000:]
    return lines, summary, status


def intervals(lines: list[dict], phase: str) -> list[dict]:
    return [x for x in lines if x.get("type") == "interval" and x.get("phase") == phase]


def op_totals(lines: list[dict], phase: str) -> dict[str, dict[str, Any]]:
    totals: dict[str, dict[str, Any]] = {}
    for line in intervals(lines, phase):
        for op, stats in line["ops"].items():
            t = totals.setdefault(op, {"ops": 0, "errors": 0, "late": 0})
            t["ops"] += stats["ops"]
            t["errors"] += sum(stats["errors"].values())
            t["late"] += stats["late"]
    return totals
