"""The sandbox's state file (DIR/state.json), read and written under a lock.

Several commands may touch one sandbox at once (`up` in a terminal, a node action
over SSH during a run), so every read-modify-write holds DIR/.lock.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from loadtower.sandbox.processes import ProcessRecord

STATE_VERSION = 1


@dataclass
class NodeState:
    index: int
    address: str
    jmx_port: int
    standby: bool = False
    paused: bool = False
    process: ProcessRecord | None = None

    def to_json(self) -> dict:
        return {
            "index": self.index,
            "address": self.address,
            "jmx_port": self.jmx_port,
            "standby": self.standby,
            "paused": self.paused,
            "process": self.process.to_json() if self.process else None,
        }

    @classmethod
    def from_json(cls, data: dict) -> NodeState:
        return cls(
            data["index"],
            data["address"],
            data["jmx_port"],
            data.get("standby", False),
            data.get("paused", False),
            ProcessRecord.from_json(data.get("process")),
        )


@dataclass
class SandboxState:
    nodes: dict[int, NodeState] = field(default_factory=dict)
    ports: dict[str, int] = field(default_factory=dict)
    services: dict[str, ProcessRecord | None] = field(default_factory=dict)
    ssh: dict[str, str] = field(default_factory=dict)
    auth_ready: bool = False
    tls: bool = False  # the ring's nodes with TLS (DIR/tls/: sandbox/tls_certs.py)
    lean: bool = False  # `up --lean`: every later start of a node (a restart, a standby's) too

    def to_json(self) -> dict:
        return {
            "version": STATE_VERSION,
            "nodes": {str(i): n.to_json() for i, n in sorted(self.nodes.items())},
            "ports": self.ports,
            "services": {k: (v.to_json() if v else None) for k, v in self.services.items()},
            "ssh": self.ssh,
            "auth_ready": self.auth_ready,
            "tls": self.tls,
            "lean": self.lean,
        }

    @classmethod
    def from_json(cls, data: dict) -> SandboxState:
        return cls(
            nodes={int(k): NodeState.from_json(v) for k, v in data.get("nodes", {}).items()},
            ports=dict(data.get("ports", {})),
            services={k: ProcessRecord.from_json(v) for k, v in data.get("services", {}).items()},
            ssh=dict(data.get("ssh", {})),
            auth_ready=bool(data.get("auth_ready", False)),
            tls=bool(data.get("tls", False)),
            lean=bool(data.get("lean", False)),
        )


def state_path(directory: Path) -> Path:
    return directory / "state.json"


def load(directory: Path) -> SandboxState | None:
    path = state_path(directory)
    if not path.exists():
        return None
    return SandboxState.from_json(json.loads(path.read_text()))


def save(directory: Path, state: SandboxState) -> None:
    path = state_path(directory)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(state.to_json(), indent=2) + "\n")
    os.replace(tmp, path)


@contextmanager
def locked(directory: Path) -> Iterator[None]:
    directory.mkdir(parents=True, exist_ok=True)
    with open(directory / ".lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
