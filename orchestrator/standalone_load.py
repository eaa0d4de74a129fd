"""`loadtower agent run`: one host's load, stand-alone, through the same Locust
master/worker path the orchestrator uses (a local master, K local worker processes).
Prints interval lines (``--json``) and, last, one summary line."""

from __future__ import annotations

import json
import os
import queue
import secrets
import socket
import subprocess
import sys
import threading
import time
from typing import Any

from loadtower.agents import secret_dir
from loadtower.errors import LoadtowerError
from loadtower.protocol.hdr_encoding import new_hist
from loadtower.protocol.link_secrets import KEY_ENV, LINK_KEY_BYTES, LINK_KEY_FILE, split_secrets
from loadtower.protocol.phase_spec import PhaseSpec
from loadtower.protocol.version import PROTOCOL_VERSION
from loadtower.store.hdr import decode

JOIN_TIMEOUT_S = 60.0


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class LocalLoad:
    """A master and its workers as child processes, commanded over the master's stdin."""

    def __init__(self, processes: int, on_line: Any) -> None:
        port = free_port()
        py = [sys.executable, "-m", "loadtower", "agent"]
        # the link key and the secrets in a private directory here, as on an agent host
        self.key = secrets.token_bytes(LINK_KEY_BYTES)
        self.run_id = f"agent-run-{os.getpid()}-{secrets.token_hex(4)}"
        self.private = secret_dir.put(self.run_id, {LINK_KEY_FILE: self.key.hex()})
        self.master = subprocess.Popen(
            [*py, "master", "--bind", f"127.0.0.1:{port}", "--expect-workers", str(processes)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            bufsize=1,
            env={**os.environ, KEY_ENV: self.key.hex()},
        )
        self.workers = subprocess.Popen(
            [
                *py,
                "worker",
                "--master",
                f"127.0.0.1:{port}",
                "--processes",
                str(processes),
                "--host-name",
                socket.gethostname(),
                "--secret-dir",
                str(self.private),
            ],
            stdin=subprocess.DEVNULL,
        )
        self.lines: queue.Queue[dict | None] = queue.Queue()
        self.on_line = on_line
        self.expected = processes
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.master.stdout is not None
        for raw in self.master.stdout:
            try:
                line = json.loads(raw)
            except ValueError:
                continue
            self.lines.put(line)
        self.lines.put(None)

    def send(self, cmd: dict[str, Any]) -> None:
        if cmd.get("cmd") == "start":  # its secrets to files; the workers read them there
            cmd, files = split_secrets(cmd, self.key)
            secret_dir.put(self.run_id, files)
        assert self.master.stdin is not None
        self.master.stdin.write(json.dumps(cmd) + "\n")
        self.master.stdin.flush()

    def wait_for(self, kind: str, timeout: float, count: int = 1) -> None:
        """Relay lines until ``count`` lines of type/kind ``kind`` arrived."""
        deadline = time.monotonic() + timeout
        seen = 0
        while seen < count:
            try:
                line = self.lines.get(timeout=max(0.05, deadline - time.monotonic()))
            except queue.Empty:
                raise LoadtowerError(f"timed out after {timeout:.0f}s waiting for {kind}") from None
            if line is None:
                raise LoadtowerError("the Locust master exited unexpectedly")
            self.on_line(line)
            if line.get("type") == kind or line.get("kind") == kind:
                seen += 1
            if line.get("kind") == "error" or line.get("type") == "failed":
                raise LoadtowerError(str(line.get("message")))

    def drain(self, seconds: float) -> None:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            try:
                line = self.lines.get(timeout=0.05)
            except queue.Empty:
                continue
            if line is None:
                return
            self.on_line(line)

    def close(self) -> None:
        try:
            self.send({"cmd": "quit"})
        except (OSError, ValueError):
            pass
        self.drain(2.5)
        for proc in (self.master, self.workers):
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)
        secret_dir.remove(self.run_id)


class Summary:
    def __init__(self, json_out: bool) -> None:
        self.json_out = json_out
        self.hist = new_hist()
        self.ops = self.errors = 0
        self.cpu_s = 0.0
        self.phase = ""

    def line(self, line: dict[str, Any]) -> None:
        if self.json_out and line.get("type") in ("interval", "event"):
            print(json.dumps(line, separators=(",", ":")), flush=True)
        if line.get("type") != "interval" or line.get("phase") != self.phase:
            return
        self.cpu_s += float(line.get("cpu_s", 0.0))
        for stats in line["ops"].values():
            self.ops += stats["ops"]
            self.errors += sum(stats["errors"].values())
            self.hist.add(decode(stats["response_hist"]))

    def result(self) -> dict[str, Any]:
        ms = 1000.0
        return {
            "summary": {
                "ops": self.ops,
                "errors": self.errors,
                "p50_ms": self.hist.get_value_at_percentile(50) / ms,
                "p99_ms": self.hist.get_value_at_percentile(99) / ms,
                "max_ms": self.hist.get_max_value() / ms,
                "cpu_s": round(self.cpu_s, 3),
            }
        }


def run_agent(
    conn: dict[str, Any],
    spec: PhaseSpec,
    *,
    processes: int,
    load: bool,
    records: int,
    rate: float | None,
    users: int | None,
    duration: float,
    json_out: bool,
    load_concurrency: int = 64,
) -> int:
    summary = Summary(json_out)
    local = LocalLoad(processes, summary.line)
    try:
        local.wait_for("worker_joined", JOIN_TIMEOUT_S, count=processes)
        base = {"cmd": "start", "protocol": PROTOCOL_VERSION, "spec": spec, **conn}
        if load:
            summary.phase = "load"
            local.send(
                {
                    **base,
                    "phase": "load",
                    "mode": "load",
                    "records": records,
                    "concurrency": load_concurrency,
                }
            )
            local.wait_for("started", 150.0)
            local.wait_for("phase_done", max(600.0, records / 100.0))
        if duration > 0:
            summary = _reset(summary, "run")
            local.on_line = summary.line
            local.send(
                {
                    **base,
                    "phase": "run",
                    "mode": "run",
                    "rate": rate,
                    "users": users,
                    "records": records,
                }
            )
            local.wait_for("started", 150.0)
            local.drain(duration)
            local.send({"cmd": "stop"})
            # the master acknowledges after every line of the phase (docs/agent-protocol.md)
            local.wait_for("stopped", 30.0)
    finally:
        local.close()
    print(json.dumps(summary.result()) if json_out else _human(summary.result()), flush=True)
    return 0 if summary.errors == 0 else 1


def _reset(old: Summary, phase: str) -> Summary:
    fresh = Summary(old.json_out)
    fresh.phase = phase
    fresh.cpu_s = 0.0
    return fresh


def _human(result: dict[str, Any]) -> str:
    s = result["summary"]
    return (
        f"ops {s['ops']:,}  errors {s['errors']}  p50 {s['p50_ms']:.2f} ms  "
        f"p99 {s['p99_ms']:.2f} ms  max {s['max_ms']:.2f} ms  agent CPU {s['cpu_s']:.1f} s"
    )
