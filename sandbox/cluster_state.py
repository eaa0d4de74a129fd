"""The cluster sandbox's state file (DIR/cluster/state.json), under DIR/.lock.

It records every step `up` took (so `down` and the closing note can name them, with
their seconds), the processes it started (per host, and Prometheus/node_exporter in
the root namespace) and each ring node's flags (standby, paused, partitioned).
`down` does not need it: everything in the namespaces is found by name
(``host_teardown.remove_all``), and root-namespace processes by the directory their
command line names. It only makes `down` quicker and `status` informative.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from loadtower.sandbox.cluster_layout import cluster_dir
from loadtower.sandbox.processes import ProcessRecord

STATE_VERSION = 1


@dataclass
class ClusterNode:
    name: str
    standby: bool = False
    paused: bool = False
    partitioned: bool = False
    process: ProcessRecord | None = None

    def to_json(self) -> dict:
        return {
            "name": self.name,
            "standby": self.standby,
            "paused": self.paused,
            "partitioned": self.partitioned,
            "process": self.process.to_json() if self.process else None,
        }

    @classmethod
    def from_json(cls, data: dict) -> ClusterNode:
        return cls(
            data["name"],
            bool(data.get("standby", False)),
            bool(data.get("paused", False)),
            bool(data.get("partitioned", False)),
            ProcessRecord.from_json(data.get("process")),
        )


@dataclass
class ClusterState:
    hosts: list[str] = field(default_factory=list)
    nodes: dict[int, ClusterNode] = field(default_factory=dict)
    services: dict[str, ProcessRecord | None] = field(default_factory=dict)
    ports: dict[str, int] = field(default_factory=dict)
    ssh: dict = field(default_factory=dict)
    tls: dict = field(default_factory=dict)
    steps: list[dict] = field(default_factory=list)  # {"step": ..., "seconds": ...}
    ready: bool = False
    lean: bool = False  # `up --cluster --lean`: every later start of a node too

    def to_json(self) -> dict:
        return {
            "version": STATE_VERSION,
            "hosts": self.hosts,
            "nodes": {str(i): n.to_json() for i, n in sorted(self.nodes.items())},
            "services": {k: (v.to_json() if v else None) for k, v in self.services.items()},
            "ports": self.ports,
            "ssh": self.ssh,
            "tls": self.tls,
            "steps": self.steps,
            "ready": self.ready,
            "lean": self.lean,
        }

    @classmethod
    def from_json(cls, data: dict) -> ClusterState:
        return cls(
            hosts=list(data.get("hosts", [])),
            nodes={int(k): ClusterNode.from_json(v) for k, v in data.get("nodes", {}).items()},
            services={k: ProcessRecord.from_json(v) for k, v in data.get("services", {}).items()},
            ports=dict(data.get("ports", {})),
            ssh=dict(data.get("ssh", {})),
            tls=dict(data.get("tls", {})),
            steps=list(data.get("steps", [])),
            ready=bool(data.get("ready", False)),
            lean=bool(data.get("lean", False)),
        )


def path(directory: Path) -> Path:
    return cluster_dir(directory) / "state.json"


def load(directory: Path) -> ClusterState | None:
    p = path(directory)
    if not p.exists():
        return None
    return ClusterState.from_json(json.loads(p.read_text()))


def save(directory: Path, state: ClusterState) -> None:
    p = path(directory)
    p.parent.mkdir(parents=True, exist_ok=True)
    tmp = p.with_suffix(".tmp")
    tmp.write_text(json.dumps(state.to_json(), indent=2) + "\n")
    os.replace(tmp, p)
