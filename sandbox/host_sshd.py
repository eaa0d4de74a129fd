"""An sshd per cluster host, inside the host's namespace on port 22 of its MGMT
address, with its own host key, letting in only ``ltsandbox`` with the orchestrator's
key.

Files under DIR/cluster/ssh/: ``id_ed25519`` (the orchestrator's client key, root's,
mode 600), ``known_hosts`` (each host's MGMT address, port 22 so without brackets, and
its host key) and per host ``hosts/NAME/{ssh_host_ed25519_key, sshd_config, sshd.pid}``.
The client key is authorised in ~ltsandbox/.ssh/authorized_keys (owned by ltsandbox,
mode 600, where sshd's StrictModes accepts it). Start a host's sshd with
``host_cgroup.wrap(NAME, command(config))`` (``start`` does), so every session and
everything it starts runs in the host's namespace and cgroups.
"""

from __future__ import annotations

import os
import pwd
from pathlib import Path
from typing import TypedDict

from loadtower.errors import LoadtowerError
from loadtower.sandbox import host_cgroup, host_user, netns
from loadtower.sandbox.processes import ProcessRecord, spawn, wait_until
from loadtower.sandbox.ssh_server import banner, keygen, sshd_binary

PORT = 22


class SshdPaths(TypedDict):
    key: str
    known_hosts: str
    user: str
    configs: dict[str, str]


def ssh_dir(directory: Path) -> Path:
    return directory / "cluster" / "ssh"


def host_dir(directory: Path, name: str) -> Path:
    return ssh_dir(directory) / "hosts" / name


def config_text(name: str, host_key: Path, pid_file: Path) -> str:
    """The sshd_config of one host (pure: tests read it)."""
    return "\n".join(
        [
            f"Port {PORT}",
            f"ListenAddress {netns.mgmt_address(name)}",
            f"HostKey {host_key}",
            f"PidFile {pid_file}",
            "AuthorizedKeysFile .ssh/authorized_keys",
            "PubkeyAuthentication yes",
            "PasswordAuthentication no",
            "KbdInteractiveAuthentication no",
            "UsePAM no",
            "StrictModes yes",
            "PermitRootLogin no",
            f"AllowUsers {host_user.USER}",
            "AllowTcpForwarding yes",
            "X11Forwarding no",
            "UseDNS no",
            "PrintMotd no",
            "Subsystem sftp internal-sftp",
            "LogLevel INFO",
            "",
        ]
    )


def known_hosts_line(name: str, host_key_pub: str) -> str:
    key_type, key_b64 = host_key_pub.split()[:2]
    return f"{netns.mgmt_address(name)} {key_type} {key_b64}\n"


def _authorize(public_key: str) -> None:
    """The client key in ~ltsandbox/.ssh/authorized_keys, as StrictModes wants it."""
    account = pwd.getpwnam(host_user.USER)
    home = Path(account.pw_dir)
    dot_ssh = home / ".ssh"
    dot_ssh.mkdir(mode=0o700, exist_ok=True)
    authorized = dot_ssh / "authorized_keys"
    authorized.write_text(public_key)
    # a home left by an earlier user of that name belongs to this one now
    for path, mode in ((home, 0o750), (dot_ssh, 0o700), (authorized, 0o600)):
        os.chown(path, account.pw_uid, account.pw_gid)
        os.chmod(path, mode)  # StrictModes refuses group- or world-writable ones


def prepare(directory: Path, names: list[str]) -> SshdPaths:
    """Keys, authorized_keys, known_hosts and one sshd_config per host (creates the
    user ``ltsandbox`` if it is missing); returns their paths."""
    for name in names:
        netns.check_name(name)
    base = ssh_dir(directory)
    base.mkdir(parents=True, exist_ok=True)
    os.chmod(base, 0o700)
    client_key = base / "id_ed25519"
    keygen(client_key, "loadtower-cluster-orchestrator")
    os.chmod(client_key, 0o600)
    host_user.ensure_user()
    _authorize(Path(f"{client_key}.pub").read_text())
    lines = []
    configs: dict[str, str] = {}
    for name in names:
        where = host_dir(directory, name)
        where.mkdir(parents=True, exist_ok=True)
        host_key = where / "ssh_host_ed25519_key"
        keygen(host_key, f"loadtower-cluster-{name}")
        lines.append(known_hosts_line(name, Path(f"{host_key}.pub").read_text()))
        config = where / "sshd_config"
        config.write_text(config_text(name, host_key, where / "sshd.pid"))
        configs[name] = str(config)
    known_hosts = base / "known_hosts"
    known_hosts.write_text("".join(lines))
    Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # sshd's privilege separation dir
    return {
        "key": str(client_key),
        "known_hosts": str(known_hosts),
        "user": host_user.USER,
        "configs": configs,
    }


def command(config: str | Path) -> list[str]:
    return [sshd_binary(), "-D", "-e", "-f", str(config)]


def start(name: str, config: str | Path, log: Path, timeout: float = 30.0) -> ProcessRecord:
    """Start the host's sshd in its namespace and cgroups; wait for its banner on
    MGMT:22 (from the root namespace, through ltc-mgmt)."""
    record = spawn(host_cgroup.wrap(name, command(config)), log)
    address = netns.mgmt_address(name)
    if not wait_until(lambda: banner(address, PORT, timeout=2.0), timeout, interval=0.1):
        raise LoadtowerError(f"sshd of cluster host {name} does not answer on {address}:{PORT} after {timeout:.0f} s; see {log}")
    return record
