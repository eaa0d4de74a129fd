"""The cluster sandbox's hosts: which namespace host runs what (issue 19's design).

Addresses, namespaces and interface names come from ``loadtower.sandbox.netns``
(DATA 198.18.0.X on bridge ltc-data, MGMT 198.19.0.X on ltc-mgmt); this module says
what each host is: a node of the ring (its number, data centre, rack, standby or not),
a load agent, or an engine service's host (an `EngineService` with a ``cluster_host``).
Each node uses the ring engine's own ports (sandbox/ring_engine.py; its admin port is
local to its namespace, so every node can use the same one); a service its preferred
port.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from loadtower.errors import LoadtowerError
from loadtower.sandbox.engine_services import EngineService
from loadtower.sandbox.ring_engine import ring_engine

SSH_PORT = 22
OWNER_FILE = Path("/run/loadtower-cluster.dir")  # names the dir whose cluster is up


@dataclass(frozen=True)
class ClusterHost:
    name: str
    role: str  # "db", "agent" or "service" (an engine service's host)
    node: int = 0  # the ring's node number (db1 = 1, ...); 0 for other hosts
    dc: str = ""
    rack: str = ""
    standby: bool = False


DB_HOSTS = (
    ClusterHost("db1", "db", 1, "dc1", "r1"),
    ClusterHost("db2", "db", 2, "dc1", "r2", standby=True),
    ClusterHost("db3", "db", 3, "dc2", "r1"),
)
AGENT_HOSTS = (ClusterHost("agent1", "agent"), ClusterHost("agent2", "agent"))
SEED = "db1"


def service_host(svc: EngineService) -> ClusterHost:
    """The host of an engine service the cluster runs (its ``cluster_host``)."""
    if not svc.cluster_host:
        raise LoadtowerError(f"the cluster sandbox runs no {svc.title} host")
    return ClusterHost(svc.cluster_host, "service")


def hosts(services: Iterable[EngineService] = ()) -> list[ClusterHost]:
    """Every host, in the order `up` creates them (with these services' hosts)."""
    return [*DB_HOSTS, *AGENT_HOSTS, *(service_host(svc) for svc in services)]


def db_host(node: int) -> ClusterHost:
    for host in DB_HOSTS:
        if host.node == node:
            return host
    numbers = ", ".join(str(h.node) for h in DB_HOSTS)
    raise LoadtowerError(
        f"the cluster sandbox has no {ring_engine().title} node {node} (nodes: {numbers})"
    )


def cluster_dir(directory: Path) -> Path:
    """Where the cluster's own files live inside the sandbox directory."""
    return directory / "cluster"


def is_cluster_dir(directory: Path) -> bool:
    return (cluster_dir(directory) / "state.json").exists()


def agent_bootstrap_dir(name: str) -> str:
    """agent1 and agent2 share one filesystem (one kernel): each its own directory."""
    return f"/home/ltsandbox/loadtower-{name}"
