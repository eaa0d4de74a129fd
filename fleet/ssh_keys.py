"""Host-key policy for loadtower's SSH connections.

Keys are checked against the inventory's known_hosts file. An unknown key is refused
unless accept-new is on (then it is trusted on first use and appended to the file);
a key that differs from the one on file is always refused.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import asyncssh


def host_pattern(host: str, port: int) -> str:
    return host if port == 22 else f"[{host}]:{port}"


class KeyPolicyClient(asyncssh.SSHClient):
    """Decides about keys that are not already trusted by the known_hosts file."""

    def __init__(self, known_hosts: Path, accept_new: bool) -> None:
        self.known_hosts = known_hosts
        self.accept_new = accept_new
        self.verdict = ""  # "unknown" | "changed" | "accepted"

    def validate_host_public_key(self, host: str, addr: str, port: int, key: Any) -> bool:
        on_file: list = []
        if self.known_hosts.exists():
            trusted = asyncssh.read_known_hosts(str(self.known_hosts))
            on_file = list(trusted.match(host, addr, port)[0])
        if on_file:
            self.verdict = "changed"
            return False
        if not self.accept_new:
            self.verdict = "unknown"
            return False
        self.known_hosts.parent.mkdir(parents=True, exist_ok=True)
        line = f"{host_pattern(host, port)} {key.export_public_key().decode().strip()}\n"
        with open(self.known_hosts, "a") as handle:
            handle.write(line)
        self.verdict = "accepted"
        return True


def refusal(name: str, host: str, port: int, verdict: str, known_hosts: Path) -> str:
    where = f"host {name} ({host}:{port})"
    if verdict == "changed":
        return (f"{where}: the SSH host key CHANGED from the one in {known_hosts}; refusing "
                "(if the host was rebuilt, remove its old line from that file)")
    return (f"{where}: unknown SSH host key (not in {known_hosts}); add it there "
            f"(ssh-keyscan -p {port} {host} >> {known_hosts}) or pass --accept-new-host-keys "
            "(or set [ssh] accept_new_host_keys = true in the inventory)")
