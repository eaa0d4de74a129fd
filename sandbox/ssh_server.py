"""A private OpenSSH sshd on a loopback high port, with generated keys.

Keys: ``DIR/ssh/host_ed25519_key`` (the server's), ``DIR/ssh/id_ed25519`` (the
user's, authorised for the current user) and ``DIR/ssh/known_hosts`` naming the
server's key for ``[127.0.0.1]:PORT``. Only key authentication is on.
"""

from __future__ import annotations

import getpass
import os
import shutil
import subprocess
from pathlib import Path

from loadtower.errors import LoadtowerError

SSHD = "/usr/sbin/sshd"


def sshd_binary() -> str:
    path = SSHD if Path(SSHD).exists() else shutil.which("sshd")
    if not path:
        raise LoadtowerError("OpenSSH's sshd is not installed (apt-get install openssh-server)")
    return path


def keygen(path: Path, comment: str) -> None:
    if path.exists():
        return
    proc = subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", str(path)],
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
    )
    if proc.returncode != 0:
        raise LoadtowerError(f"ssh-keygen failed for {path}: {proc.stderr.strip()}")


def prepare(ssh_dir: Path, host: str, port: int) -> dict[str, str]:
    """Write keys, authorized_keys, known_hosts and sshd_config; return their paths."""
    ssh_dir.mkdir(parents=True, exist_ok=True)
    os.chmod(ssh_dir, 0o700)
    host_key = ssh_dir / "host_ed25519_key"
    user_key = ssh_dir / "id_ed25519"
    keygen(host_key, "loadtower-sandbox-host")
    keygen(user_key, "loadtower-sandbox-user")
    authorized = ssh_dir / "authorized_keys"
    authorized.write_text(Path(f"{user_key}.pub").read_text())
    os.chmod(authorized, 0o600)
    key_type, key_b64 = Path(f"{host_key}.pub").read_text().split()[:2]
    known_hosts = ssh_dir / "known_hosts"
    known_hosts.write_text(f"[{host}]:{port} {key_type} {key_b64}\n")
    user = getpass.getuser()
    config = ssh_dir / "sshd_config"
    config.write_text(
        "\n".join(
            [
                f"Port {port}",
                f"ListenAddress {host}",
                f"HostKey {host_key}",
                f"PidFile {ssh_dir / 'sshd.pid'}",
                f"AuthorizedKeysFile {authorized}",
                "PubkeyAuthentication yes",
                "PasswordAuthentication no",
                "KbdInteractiveAuthentication no",
                "UsePAM no",
                "StrictModes no",
                "PermitRootLogin prohibit-password",
                f"AllowUsers {user}",
                "AllowTcpForwarding yes",
                "X11Forwarding no",
                "PrintMotd no",
                "Subsystem sftp internal-sftp",
                "LogLevel INFO",
                # bash, run by sshd for a command, reads the user's ~/.bashrc unless it is
                # a nested shell (Debian's SSH_SOURCE_BASHRC; SHLVL >= 1 says nested).
                # The sandbox's hosts stand in for other machines: the local user's
                # interactive set-up is not theirs, and it can be costly (here pyenv's
                # init: ~170 processes and 0.12 CPU-s before each command)
                "SetEnv SHLVL=1",
                "",
            ]
        )
    )
    if os.geteuid() == 0:
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # privilege separation dir
    return {
        "user": user,
        "key": str(user_key),
        "known_hosts": str(known_hosts),
        "config": str(config),
    }


def command(config: str) -> list[str]:
    return [sshd_binary(), "-D", "-e", "-f", config]


def banner(host: str, port: int, timeout: float = 2.0) -> bool:
    import socket

    try:
        with socket.create_connection((host, port), timeout=timeout) as sock:
            sock.settimeout(timeout)
            return sock.recv(64).startswith(b"SSH-2.0")
    except OSError:
        return False
