"""Test tools for the workers' link (docs/security.md): a tap on every message the Locust
master sends, an impostor ZeroMQ client on the agent host, and the processes of a run.

The tap is a `sitecustomize` module on PYTHONPATH, inherited by the Locust master the
run starts: once Locust's rpc protocol module is imported, every message the master
serializes to send (the phase, stops, acks, heartbeats: the bytes that go on the wire
beside their signature) is appended to the file named by $LT_LINK_TAP. Nothing of it is
product code.
"""

from __future__ import annotations

import os
import re
import threading
import time
from pathlib import Path
from typing import Any

TAP_ENV = "LT_LINK_TAP"
SITECUSTOMIZE = r'''
import os
import sys

_TAP = os.environ.get("LT_LINK_TAP")


def _patch(module):
    message = module.Message
    original = message.serialize

    def serialize(self):
        data = original(self)
        with open(_TAP, "a", encoding="ascii") as out:
            out.write(f"{self.type}\t{self.node_id}\t{data.hex()}\n")
        return data

    message.serialize = serialize


if _TAP:
    import importlib.abc
    import importlib.util

    class _Hook(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path, target=None):
            if name != "locust.rpc.protocol":
                return None
            sys.meta_path.remove(self)
            spec = importlib.util.find_spec(name)
            run = spec.loader.exec_module

            def exec_module(module):
                run(module)
                _patch(module)

            spec.loader.exec_module = exec_module
            return spec

    sys.meta_path.insert(0, _Hook())
'''


def tap_env(directory: Path) -> tuple[dict[str, str], Path]:
    """(the environment for `loadtower run` with the tap, the tap's file)."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "sitecustomize.py").write_text(SITECUSTOMIZE)
    tap = directory / "link-tap.txt"
    path = os.pathsep.join(p for p in (str(directory), os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, "PYTHONPATH": path, TAP_ENV: str(tap)}, tap


def tapped(tap: Path) -> list[tuple[str, str, bytes]]:
    """(message type, worker id, the bytes on the wire) of every message the master sent."""
    if not tap.exists():
        return []
    out = []
    for line in tap.read_text().splitlines():
        kind, node, data = line.split("\t")
        out.append((kind, node, bytes.fromhex(data)))
    return out


def _cmdline(pid: str) -> list[str]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
    except OSError:
        return []


def _arg(argv: list[str], flag: str) -> str | None:
    return argv[argv.index(flag) + 1] if flag in argv and argv.index(flag) + 1 < len(argv) else None


def run_id_of(orchestrator_pid: int) -> str | None:
    """The run id of the Locust master that the `loadtower run` process started."""
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) != orchestrator_pid:
            continue
        argv = _cmdline(pid)
        if "master" in argv and "agent" in argv:
            return _arg(argv, "--lt-run")
    return None


def workers_of(run_id: str) -> list[dict[str, str]]:
    """The `loadtower agent worker` commands of the run on this machine (as any user on an
    agent host sees them in `ps`): where their master is, their private directory."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        argv = _cmdline(pid)
        if "worker" in argv and _arg(argv, "--lt-run") == run_id and "--index" not in argv:
            found.append({"master": _arg(argv, "--master") or "",
                          "secret_dir": _arg(argv, "--secret-dir") or ""})
    return found


def wait_for(what: Any, timeout: float, every: float = 0.1) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = what()
        if value:
            return value
        time.sleep(every)
    return None


class Impostor:
    """A ZeroMQ DEALER on the agent host that speaks Locust's worker protocol to the
    forwarded port: `client_ready` then a heartbeat a second, recording every frame the
    master sends it, until stop()."""

    def __init__(self, address: str, identity: str = "impostor_probe") -> None:
        self.address, self.identity = address, identity
        self.received: list[list[bytes]] = []
        self.sent = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> Impostor:
        self._thread.start()
        return self

    def _run(self) -> None:
        import zmq
        from locust import __version__
        from locust.rpc.protocol import Message

        context = zmq.Context()
        sock = context.socket(zmq.DEALER)
        sock.setsockopt(zmq.IDENTITY, self.identity.encode())
        sock.setsockopt(zmq.LINGER, 0)
        sock.connect(f"tcp://{self.address}")
        try:
            sock.send(Message("client_ready", __version__, self.identity).serialize())
            self.sent += 1
            next_beat = time.monotonic() + 1.0
            while not self._stop.is_set():
                if sock.poll(100):
                    self.received.append(sock.recv_multipart())
                if time.monotonic() >= next_beat:
                    beat = {"state": "ready", "current_cpu_usage": 1.0,
                            "current_memory_usage": 1}
                    sock.send(Message("heartbeat", beat, self.identity).serialize())
                    self.sent += 1
                    next_beat += 1.0
        finally:
            sock.close(0)
            context.term()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(10)


def pem_body_lines(pem: str) -> list[str]:
    """The base64 lines of a PEM key: what a leak of it would contain."""
    return [line for line in pem.splitlines() if line and not re.match(r"-----", line)]
