"""The cluster sandbox's ring nodes: their places, start-up inside their host's
namespace and cgroup, and their admin tool inside that namespace.

Node N lives in DIR/cluster/RING/dbN (RING: the ring engine's name,
sandbox/ring_engine.py), listens on its host's DATA address (the engine's storage and
client ports, client encryption required), keeps its admin port on 127.0.0.1 inside its
namespace, knows its DC and rack, and encrypts traffic between DCs.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from loadtower.sandbox import host_cgroup, netns, netns_enter
from loadtower.sandbox import processes as procs
from loadtower.sandbox.cluster_layout import SEED, ClusterHost, cluster_dir
from loadtower.sandbox.cluster_state import ClusterNode, ClusterState
from loadtower.sandbox.ring_engine import (
    AdminTool,
    NodeCerts,
    NodePlace,
    RingNode,
    ring_engine,
)
from loadtower.sandbox.tls_certs import TlsFiles


def home(directory: Path, host: ClusterHost) -> Path:
    """The node's folder: configuration, data, logs."""
    return cluster_dir(directory) / ring_engine().name / host.name


def spec(
    directory: Path, host: ClusterHost, tls: TlsFiles, heap: str = "1G", lean: bool = False
) -> RingNode:
    ring = ring_engine()
    return ring.node(NodePlace(
        index=host.node,
        address=netns.data_address(host.name),
        home=home(directory, host),
        seed=netns.data_address(SEED),
        storage_port=ring.storage_port,
        native_port=ring.native_port,
        jmx_port=ring.admin_port,
        heap=heap,
        lean=lean,
        dc=host.dc,
        rack=host.rack,
        tls=NodeCerts(ca=tls.ca, combined=tls.nodes[host.name].combined),
    ))


def spawn(node_spec: RingNode, host: ClusterHost) -> procs.ProcessRecord:
    """Start the node in its host's namespace and cgroup (host_cgroup.wrap)."""
    node_spec.write_config()
    return procs.spawn(host_cgroup.wrap(host.name, node_spec.command()), node_spec.stdout_log)


def answers(host: ClusterHost) -> bool:
    """The node's client port accepts connections (from the root namespace, over
    ltc-data)."""
    return procs.port_answers(netns.data_address(host.name), ring_engine().native_port)


def nodetool(
    node_spec: RingNode, host: ClusterHost, *args: str, timeout: float = 120.0
) -> subprocess.CompletedProcess:
    with netns_enter.inside(netns.namespace(host.name)):
        return node_spec.nodetool(*args, timeout=timeout)


def admin_tool(node_spec: RingNode, host: ClusterHost) -> AdminTool:
    """The node's admin tool, run inside its host's namespace."""

    def run(*args: str, timeout: float = 120.0) -> subprocess.CompletedProcess:
        return nodetool(node_spec, host, *args, timeout=timeout)

    return run


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
