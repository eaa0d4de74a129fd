"""Node actions on the cluster sandbox's ring nodes, as `loadtower sandbox node
ACTION --dir DIR N` runs them (locally as root, or on the node's own host over SSH as
ltsandbox through ``sudo -n``).

start/stop/kill/pause/resume act on the node's process (started in its host's namespace
and cgroup), flush/compact/status run the ring engine's admin tool (nodetool,
sandbox/ring_engine.py) inside the namespace, partition/heal take the host's DATA link
down/up (``netns.set_data_link``: SSH over MGMT keeps working, so `heal` can be sent),
decommission returns a joined standby node to standby.
"""

from __future__ import annotations

import os
import shutil
import signal
from pathlib import Path

from loadtower.errors import LoadtowerError
from loadtower.sandbox import cluster_nodes, netns, netns_enter
from loadtower.sandbox import cluster_state as cst
from loadtower.sandbox import processes as procs
from loadtower.sandbox.cluster_layout import ClusterHost, db_host
from loadtower.sandbox.cluster_state import ClusterNode, ClusterState
from loadtower.sandbox.cluster_sudoers import NODE_ACTIONS, USER
from loadtower.sandbox.ring_engine import RingNode, ring_engine
from loadtower.sandbox.state import locked
from loadtower.sandbox.tls_certs import TlsFiles

ACTIONS = (*NODE_ACTIONS, "decommission")  # decommission: root only, not through sudo


def check_own_host(host: ClusterHost) -> None:
    """Started through sudo (from a host's SSH session): only that host's own node."""
    if os.environ.get("SUDO_USER") != USER:
        return
    if not netns_enter.same_namespace(netns.namespace(host.name)):
        raise LoadtowerError(
            f"node {host.node} belongs to host {host.name}: run its actions on {host.name}"
        )


def wait_client_port(host: ClusterHost, node: ClusterNode, timeout: float) -> None:
    """Until the node's client port answers."""
    procs.wait_ready(
        f"{ring_engine().title} node {host.node} ({host.name} "
        f"{netns.data_address(host.name)})",
        node.process,
        lambda: cluster_nodes.answers(host),
        timeout,
    )


def node_action(
    directory: Path,
    tls: TlsFiles,
    action: str,
    number: int,
    wait: bool = True,
    timeout: float = 300.0,
    heap: str = "1G",
) -> str:
    host = db_host(number)
    check_own_host(host)
    with locked(directory):
        state = _require(directory)
        node = state.nodes[number]
        spec = cluster_nodes.spec(directory, host, tls, heap, state.lean)
        alive = procs.is_alive(node.process)
        if action == "start":
            if alive and node.paused:
                raise LoadtowerError(f"node {number} is paused: use `resume`")
            if not alive:
                node.process = cluster_nodes.spawn(spec, host)
        elif action in ("stop", "kill"):
            if action == "kill":
                procs.kill(node.process)
            procs.stop(node.process)
            node.process, node.paused = None, False
        elif action in ("pause", "resume"):
            if not alive:
                raise LoadtowerError(f"node {number} is not running")
            procs.send(node.process, signal.SIGSTOP if action == "pause" else signal.SIGCONT)
            node.paused = action == "pause"
        elif action in ("partition", "heal"):
            netns.set_data_link(host.name, action == "heal")
            node.partitioned = action == "partition"
        elif action in ("flush", "compact", "status"):
            return _nodetool(state, spec, host, action, alive, tls, heap, directory)
        elif action == "decommission":
            _decommission(directory, spec, host, node, alive)
        else:
            raise LoadtowerError(f"unknown node action '{action}'")
        cst.save(directory, state)
    if action == "start" and wait:
        wait_client_port(host, node, timeout)
    return f"node {number} ({host.name}): {cluster_nodes.status(state, host)}\n"


def _nodetool(
    state: ClusterState,
    spec: RingNode,
    host: ClusterHost,
    action: str,
    alive: bool,
    tls: TlsFiles,
    heap: str,
    directory: Path,
) -> str:
    if not alive:
        if action != "status":
            raise LoadtowerError(f"node {host.node} is not running")
        host = _any_running(state)  # the ring as a running node sees it
        spec = cluster_nodes.spec(directory, host, tls, heap)
    proc = cluster_nodes.nodetool(spec, host, action)
    if proc.returncode != 0:
        raise LoadtowerError(
            f"nodetool {action} on node {host.node} ({host.name}) failed: "
            f"{(proc.stderr or proc.stdout).strip()[-800:]}"
        )
    return str(proc.stdout)


def _any_running(state: ClusterState) -> ClusterHost:
    for number, node in sorted(state.nodes.items()):
        if procs.is_alive(node.process) and not node.paused:
            return db_host(number)
    raise LoadtowerError(f"no {ring_engine().title} node of the cluster sandbox is running")


def _decommission(
    directory: Path,
    spec: RingNode,
    host: ClusterHost,
    node: ClusterNode,
    alive: bool,
) -> None:
    """A standby node that joined gives its ranges back, stops and loses its directory."""
    if not node.standby:
        raise LoadtowerError(
            f"node {host.node} is not a standby node: only those are decommissioned"
        )
    if alive and node.paused:
        raise LoadtowerError(f"node {host.node} is paused: use `resume` first")
    if alive:
        proc = cluster_nodes.nodetool(spec, host, "decommission", "--force", timeout=900)
        if proc.returncode != 0:
            raise LoadtowerError(
                f"nodetool decommission on node {host.node} failed: "
                f"{(proc.stderr or proc.stdout).strip()[-800:]}"
            )
    procs.stop(node.process)
    node.process, node.paused = None, False
    shutil.rmtree(cluster_nodes.home(directory, host), ignore_errors=True)


def _require(directory: Path) -> ClusterState:
    state = cst.load(directory)
    if state is None:
        raise LoadtowerError(
            f"no cluster sandbox in {directory} "
            f"(run `loadtower sandbox up --cluster --dir {directory}`)"
        )
    return state
