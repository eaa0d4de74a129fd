"""The sandbox's Cassandra login: a `loadtower` superuser role with a random password.

The password is the ring's (DIR/secrets/cassandra.password, mode 0600: `RingEngine.
password`); the role is made once, as the built-in `cassandra` role, which is then
locked (LOGIN = false).
"""

from __future__ import annotations

import time

from loadtower.errors import LoadtowerError
from loadtower.sandbox.auth import ClientTls

USERNAME = "loadtower"
DEFAULT_ROLE = "cassandra"  # the server's built-in superuser (its password too), until locked
DEFAULT_LOGIN = (DEFAULT_ROLE, DEFAULT_ROLE)


def session(  # noqa: ANN202
    address: str, port: int, username: str, pwd: str, tls: ClientTls | None = None
):
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
        ssl_context=tls.context() if tls else None,
    )
    return cluster, cluster.connect()


def can_login(address: str, port: int, pwd: str, tls: ClientTls | None = None) -> bool:
    try:
        cluster, _ = session(address, port, USERNAME, pwd, tls)
    except Exception:  # noqa: BLE001 - any failure means "not yet"
        return False
    cluster.shutdown()
    return True


def ensure_role(
    address: str, port: int, pwd: str, timeout: float = 120.0,
    tls: ClientTls | None = None,
) -> None:
    """Create the loadtower role (once) and lock the default superuser; over TLS (the
    CA, the client certificate, the node's address checked) when ``tls`` is given."""
    deadline = time.monotonic() + timeout
    last: Exception | None = None
    while time.monotonic() < deadline:
        # the role may exist already but not be readable yet: after a restart of several
        # nodes, its row can live on a node this one does not yet see as up
        if can_login(address, port, pwd, tls):
            return
        try:
            cluster, cql = session(address, port, *DEFAULT_LOGIN, tls)
        except Exception as exc:  # noqa: BLE001 - default role appears a little after start
            last = exc
            time.sleep(1.0)
            continue
        try:
            escaped = pwd.replace("'", "''")
            cql.execute(
                f"CREATE ROLE IF NOT EXISTS {USERNAME} WITH PASSWORD = '{escaped}' "
                "AND SUPERUSER = true AND LOGIN = true"
            )
        finally:
            cluster.shutdown()
        cluster, cql = session(address, port, USERNAME, pwd, tls)
        try:
            cql.execute(f"ALTER ROLE {DEFAULT_ROLE} WITH LOGIN = false")
        finally:
            cluster.shutdown()
        return
    raise LoadtowerError(f"could not set up the Cassandra login on {address}:{port}: {last}")
