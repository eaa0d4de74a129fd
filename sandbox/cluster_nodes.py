"""The cluster sandbox's Cassandra nodes: their specs, start-up inside their host's
namespace and cgroup, and nodetool inside that namespace.

Node N lives in DIR/cluster/cassandra/dbN, listens on its host's DATA address (storage
7000, CQL 9042 with client encryption required), keeps JMX on 127.0.0.1:7199 inside its
namespace, runs GossipingPropertyFileSnitch with its DC and rack, and encrypts
internode traffic between DCs.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from loadtower.sandbox import host_cgroup, netns, netns_enter
from loadtower.sandbox import processes as procs
from loadtower.sandbox.cluster_layout import (
    CASSANDRA_PORT,
    JMX_PORT,
    SEED,
    STORAGE_PORT,
    ClusterHost,
    cluster_dir,
)
from loadtower.sandbox.cluster_state import ClusterNode, ClusterState
from loadtower.sandbox.ring_engine import NodeCerts, NodePlace, RingNode, ring_engine
from loadtower.sandbox.tls_certs import TlsFiles


def spec(directory: Path, host: ClusterHost, tls: TlsFiles, heap: str = "1G") -> RingNode:
    return ring_engine().node(NodePlace(
        index=host.node,
        address=netns.data_address(host.name),
        home=cluster_dir(directory) / "cassandra" / host.name,
        seed=netns.data_address(SEED),
        storage_port=STORAGE_PORT,
        native_port=CASSANDRA_PORT,
        jmx_port=JMX_PORT,
        heap=heap,
        dc=host.dc,
        rack=host.rack,
        tls=NodeCerts(ca=tls.ca, combined=tls.nodes[host.name].combined),
    ))


def spawn(node_spec: RingNode, host: ClusterHost) -> procs.ProcessRecord:
    """Start the node in its host's namespace and cgroup (host_cgroup.wrap)."""
    node_spec.write_config()
    return procs.spawn(host_cgroup.wrap(host.name, node_spec.command()), node_spec.stdout_log)


def answers(host: ClusterHost) -> bool:
    """The node's CQL port accepts connections (from the root namespace, over ltc-data)."""
    return procs.port_answers(netns.data_address(host.name), CASSANDRA_PORT)


def nodetool(
    node_spec: RingNode, host: ClusterHost, *args: str, timeout: float = 120.0
) -> subprocess.CompletedProcess:
    with netns_enter.inside(netns.namespace(host.name)):
        return node_spec.nodetool(*args, timeout=timeout)


def status(state: ClusterState, host: ClusterHost) -> str:
    """up / starting / paused / partitioned / standby / stopped."""
    node: ClusterNode | None = state.nodes.get(host.node)
    if node is None:
        return "absent"
    if procs.is_alive(node.process):
        if node.paused:
            return "paused"
        if node.partitioned:
            return "partitioned"
        return "up" if answers(host) else "starting"
    return "standby" if node.standby and node.process is None else "stopped"
