"""Writes DIR/inventory.toml: the sandbox's hosts as a loadtower inventory.

Every "host" is reached through the sandbox's sshd on 127.0.0.1; DB hosts carry
node actions that call `loadtower sandbox node ...` on that host. The ClickHouse host
``ch1`` (when the sandbox runs one) carries actions that call `loadtower sandbox
clickhouse ...`; its compaction is the orchestrator's own OPTIMIZE TABLE ... FINAL.
The MongoDB host ``mongo1`` (FerretDB, when the sandbox runs it) carries actions that
call `loadtower sandbox mongodb ...`; its timings are FerretDB's, not MongoDB's.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path

from loadtower.sandbox import clickhouse_service as ch
from loadtower.sandbox import mongodb_service as mongo
from loadtower.sandbox.auth import USERNAME, password_file
from loadtower.sandbox.metrics_services import run_metrics_target
from loadtower.sandbox.state import SandboxState

NODE_ACTIONS = ("start", "stop", "kill", "pause", "resume", "flush", "compact", "status")


def q(value: object) -> str:
    """A TOML value: JSON string/number literals are valid TOML."""
    return json.dumps(value)


def node_actions(directory: Path, index: int) -> dict[str, str]:
    """Every action of Cassandra node `index`; `restart` is `stop`, then `start` if the
    stop succeeded (the sandbox's CLI has no restart of its own for nodes)."""
    actions = {a: node_action(directory, a, index) for a in NODE_ACTIONS}
    actions["restart"] = f"{actions['stop']} && {actions['start']}"
    return actions


def node_action(directory: Path, action: str, index: int) -> str:
    argv = [
        sys.executable,
        "-m",
        "loadtower",
        "sandbox",
        "node",
        action,
        "--dir",
        str(directory),
        str(index),
    ]
    return shlex.join(argv)


def clickhouse_action(directory: Path, action: str) -> str:
    argv = [sys.executable, "-m", "loadtower", "sandbox", "clickhouse", action]
    return shlex.join([*argv, "--dir", str(directory)])


def clickhouse_lines(directory: Path, state: SandboxState) -> list[str]:
    """``[clickhouse]`` credentials and the host ch1 (no ``compact`` action: the
    compaction phase then runs OPTIMIZE TABLE ... FINAL itself, table by table)."""
    if not ch.enabled(state):
        return []
    return [
        "# ch1: ClickHouse's engine (chdb) behind the sandbox's HTTP endpoint.",
        "# ClickHouse TIMINGS FROM IT MEAN NOTHING (one Python server, one query at a time).",
        "[clickhouse]",
        f"username = {q(ch.USERNAME)}",
        f"password_file = {q(str(ch.password_file(directory)))}",
        "",
        f"[hosts.{ch.HOST}]",
        f"address = {q(ch.address(state))}",
        f"port = {state.ports['clickhouse']}",
        'ssh_host = "127.0.0.1"',
        'roles = ["db"]',
        'engine = "clickhouse"',
        f"node_exporter = {q('127.0.0.1:' + str(state.ports['node_exporter']))}",
        "",
        f"[hosts.{ch.HOST}.actions]",
        *(f"{a} = {q(clickhouse_action(directory, a))}" for a in ch.ACTIONS),
        "",
    ]


def mongodb_action(directory: Path, action: str) -> str:
    argv = [sys.executable, "-m", "loadtower", "sandbox", "mongodb", action]
    return shlex.join([*argv, "--dir", str(directory)])


def mongodb_lines(directory: Path, state: SandboxState) -> list[str]:
    """``[mongodb]`` credentials and the host mongo1 (FerretDB)."""
    if not mongo.enabled(state):
        return []
    return [
        f"# mongo1: {mongo.ENGINE} speaking the MongoDB protocol.",
        "# Its TIMINGS ARE FERRETDB'S, NOT MONGODB'S (a Go proxy over SQLite files).",
        "[mongodb]",
        f"port = {state.ports[mongo.SERVICE]}",
        f"username = {q(mongo.USERNAME)}",
        f"password_file = {q(str(mongo.password_file(directory)))}",
        "",
        f"[hosts.{mongo.HOST}]",
        f"address = {q(mongo.address(state))}",
        'ssh_host = "127.0.0.1"',
        'roles = ["db"]',
        'engine = "mongodb"',
        f"node_exporter = {q('127.0.0.1:' + str(state.ports['node_exporter']))}",
        "",
        f"[hosts.{mongo.HOST}.actions]",
        *(f"{a} = {q(mongodb_action(directory, a))}" for a in mongo.ACTIONS),
        "",
    ]


def client_tls_files(directory: Path) -> tuple[Path, Path, Path]:
    """(CA, client certificate, client key) that sandbox/tls_certs.py writes in DIR/tls/
    (named here: that module needs cryptography, this one runs without it)."""
    tls = directory / "tls"
    return tls / "ca.pem", tls / "client.pem", tls / "client.key"


def tls_lines(directory: Path, state: SandboxState) -> list[str]:
    """``[cassandra]``'s TLS keys when the sandbox runs Cassandra with TLS."""
    if not state.tls:
        return []
    ca, cert, key = client_tls_files(directory)
    return [
        "tls = true",
        f"tls_ca_file = {q(str(ca))}",
        f"tls_cert_file = {q(str(cert))}",
        f"tls_key_file = {q(str(key))}",
        "tls_verify_hostname = true",
    ]


def serve_lines(state: SandboxState) -> list[str]:
    """``serve``: where `loadtower run` serves its live figures, which the sandbox's
    Prometheus scrapes (job ``loadtower``)."""
    target = run_metrics_target(state)
    if target is None:
        return []
    return ["# `loadtower run` serves its live figures here; the sandbox's Prometheus "
            "scrapes them", f"serve = {q(target)}"]


def render(directory: Path, state: SandboxState) -> str:
    ssh = state.ssh
    lines = [
        "# Generated by `loadtower sandbox up`: the local sandbox as an inventory.",
        "[ssh]",
        f"user = {q(ssh['user'])}",
        f"port = {state.ports['ssh']}",
        f"key = {q(ssh['key'])}",
        f"known_hosts = {q(ssh['known_hosts'])}",
        "",
        "[metrics]",
        f"prometheus_url = {q('http://127.0.0.1:' + str(state.ports['prometheus']))}",
        *serve_lines(state),
        "",
        "[cassandra]",
        f"port = {state.ports['native']}",
        f"username = {q(USERNAME)}",
        f"password_file = {q(str(password_file(directory)))}",
        *tls_lines(directory, state),
        "",
    ]
    for index, node in sorted(state.nodes.items()):
        lines += [
            f"[hosts.db{index}]",
            f"address = {q(node.address)}",
            'ssh_host = "127.0.0.1"',
            'roles = ["db"]',
            'engine = "cassandra"',
            f"node_exporter = {q('127.0.0.1:' + str(state.ports['node_exporter']))}",
            f"standby = {'true' if node.standby else 'false'}",
            "",
            f"[hosts.db{index}.actions]",
            *(f"{a} = {q(cmd)}" for a, cmd in node_actions(directory, index).items()),
            "",
        ]
    lines += clickhouse_lines(directory, state)
    lines += mongodb_lines(directory, state)
    lines += [
        "[hosts.agent1]",
        'address = "127.0.0.1"',
        'roles = ["agent"]',
        f"python = {q(sys.executable)}",
        "processes = 1",
        "",
    ]
    return "\n".join(lines)


def write(directory: Path, state: SandboxState) -> Path:
    return write_text(directory, render(directory, state))


def write_text(directory: Path, text: str) -> Path:
    """Write DIR/inventory.toml atomically (a run may be reading it)."""
    path = directory / "inventory.toml"
    tmp = path.with_suffix(".toml.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)
    return path
