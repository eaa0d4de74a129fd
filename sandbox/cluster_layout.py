"""The cluster sandbox's hosts: which namespace host runs what (issue 19's design).

Addresses, namespaces and interface names come from ``loadtower.sandbox.netns``
(DATA 198.18.0.X on bridge ltc-data, MGMT 198.19.0.X on ltc-mgmt); this module says
what each host is: a Cassandra node (its number, data centre, rack, standby or not),
a load agent, or the ClickHouse host.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from loadtower.errors import LoadtowerError

CASSANDRA_PORT = 9042
STORAGE_PORT = 7000
JMX_PORT = 7199  # local to each node's namespace: every node can use the same one
SSH_PORT = 22
CLICKHOUSE_PORT = 8123
OWNER_FILE = Path("/run/loadtower-cluster.dir")  # names the dir whose cluster is up


@dataclass(frozen=True)
class ClusterHost:
    name: str
    role: str  # "db", "agent" or "clickhouse"
    node: int = 0  # Cassandra node number (db1 = 1, ...); 0 for other hosts
    dc: str = ""
    rack: str = ""
    standby: bool = False


DB_HOSTS = (
    ClusterHost("db1", "db", 1, "dc1", "r1"),
    ClusterHost("db2", "db", 2, "dc1", "r2", standby=True),
    ClusterHost("db3", "db", 3, "dc2", "r1"),
)
AGENT_HOSTS = (ClusterHost("agent1", "agent"), ClusterHost("agent2", "agent"))
CLICKHOUSE_HOST = ClusterHost("ch1", "clickhouse")
SEED = "db1"


def hosts(clickhouse: bool) -> list[ClusterHost]:
    """Every host, in the order `up` creates them."""
    return [*DB_HOSTS, *AGENT_HOSTS, *([CLICKHOUSE_HOST] if clickhouse else [])]


def db_host(node: int) -> ClusterHost:
    for host in DB_HOSTS:
        if host.node == node:
            return host
    numbers = ", ".join(str(h.node) for h in DB_HOSTS)
    raise LoadtowerError(f"the cluster sandbox has no Cassandra node {node} (nodes: {numbers})")


def cluster_dir(directory: Path) -> Path:
    """Where the cluster's own files live inside the sandbox directory."""
    return directory / "cluster"


def is_cluster_dir(directory: Path) -> bool:
    return (cluster_dir(directory) / "state.json").exists()


def agent_bootstrap_dir(name: str) -> str:
    """agent1 and agent2 share one filesystem (one kernel): each its own directory."""
    return f"/home/ltsandbox/loadtower-{name}"
