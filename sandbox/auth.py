"""The sandbox's Cassandra login: a `loadtower` superuser role with a random password.

The password is generated once and kept in DIR/secrets/cassandra.password (mode
0600); the built-in `cassandra` role is then locked (LOGIN = false).
"""

from __future__ import annotations

import os
import secrets
import time
from pathlib import Path

from loadtower.errors import LoadtowerError

USERNAME = "loadtower"


def password_file(directory: Path) -> Path:
    return directory / "secrets" / "cassandra.password"


def password(directory: Path) -> str:
    return secret(password_file(directory))


def secret(path: Path) -> str:
    """The random password kept in ``path`` (mode 0600), generated the first time."""
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        os.chmod(path.parent, 0o700)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(secrets.token_urlsafe(18) + "\n")
    return path.read_text().strip()


def _session(address: str, port: int, username: str, pwd: str):  # noqa: ANN202
    from cassandra.auth import PlainTextAuthProvider
    from cassandra.cluster import Cluster
    from cassandra.policies import WhiteListRoundRobinPolicy

    cluster = Cluster(
        [address],
        port=port,
        connect_timeout=10,
        auth_provider=PlainTextAuthProvider(username, pwd),
        load_balancing_policy=WhiteListRoundRobinPolicy([address]),
        protocol_version=5,
    )
    return cluster, cluster.connect()


def can_login(address: str, port: int, pwd: str) -> bool:
    try:
        cluster, _ = _session(address, port, USERNAME, pwd)
    except Exception:  # noqa: BLE001 - any failure means "not yet"
        return False
    cluster.shutdown()
    return True


def ensure_role(address: str, port: int, directory: Path, timeout: float = 120.0) -> None:
    """Create the loadtower role (once) and lock the default superuser."""
    pwd = password(directory)
    deadline = time.monotonic() + timeout
    last: Exception | None = None
    while time.monotonic() < deadline:
        # the role may exist already but not be readable yet: after a restart of several
        # nodes, its row can live on a node this one does not yet see as up
        if can_login(address, port, pwd):
            return
        try:
            cluster, session = _session(address, port, "cassandra", "cassandra")
        except Exception as exc:  # noqa: BLE001 - default role appears a little after start
            last = exc
            time.sleep(1.0)
            continue
        try:
            escaped = pwd.replace("'", "''")
            session.execute(
                f"CREATE ROLE IF NOT EXISTS {USERNAME} WITH PASSWORD = '{escaped}' "
                "AND SUPERUSER = true AND LOGIN = true"
            )
        finally:
            cluster.shutdown()
        cluster, session = _session(address, port, USERNAME, pwd)
        try:
            session.execute("ALTER ROLE cassandra WITH LOGIN = false")
        finally:
            cluster.shutdown()
        return
    raise LoadtowerError(f"could not set up the Cassandra login on {address}:{port}: {last}")
