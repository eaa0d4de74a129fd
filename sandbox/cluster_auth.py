"""The cluster sandbox's login across two data centres.

Cassandra creates ``system_auth`` with SimpleStrategy and one replica, so a role's row
lives on one node of either DC; a login in dc1 reads it at LOCAL_ONE / LOCAL_QUORUM and
fails when that node is in dc2 ("Cannot achieve consistency level LOCAL_QUORUM"). As a
real multi-DC cluster does, ``system_auth`` gets NetworkTopologyStrategy with one
replica in each DC before the role is created, and a repair of it puts the rows that
already exist (the default superuser) on their new replicas. Then the sandbox role is
made over TLS (the ring engine's ``ensure_login``, sandbox/ring_engine.py).
"""

from __future__ import annotations

import time

from loadtower.errors import LoadtowerError
from loadtower.sandbox.auth import ClientTls
from loadtower.sandbox.cluster_layout import CASSANDRA_PORT, DB_HOSTS

DEFAULT_LOGIN = ("cassandra", "cassandra")


def system_auth_replication() -> str:
    """``{'class': 'NetworkTopologyStrategy', 'dc1': 1, 'dc2': 1}`` for the layout's DCs."""
    dcs = sorted({h.dc for h in DB_HOSTS})
    return "{'class': 'NetworkTopologyStrategy', " + ", ".join(f"'{dc}': 1" for dc in dcs) + "}"


def spread_system_auth(address: str, tls: ClientTls, timeout: float = 120.0) -> bool:
    """ALTER system_auth to one replica per DC, as the default superuser (while it can
    still log in); False when the sandbox role already exists (nothing to do)."""
    deadline = time.monotonic() + timeout
    last: Exception | None = None
    while time.monotonic() < deadline:
        try:
            cluster, session = _default_session(address, tls)
        except Exception as exc:  # noqa: BLE001 - the default role appears a little after start
            last = exc
            time.sleep(1.0)
            continue
        try:
            session.execute(
                f"ALTER KEYSPACE system_auth WITH replication = {system_auth_replication()}"
            )
        finally:
            cluster.shutdown()
        return True
    raise LoadtowerError(
        f"could not set system_auth's replication on {address}:{CASSANDRA_PORT}: {last}"
    )


def _default_session(address: str, tls: ClientTls):  # noqa: ANN202 - the driver's types
    from cassandra.auth import PlainTextAuthProvider
    from cassandra.cluster import Cluster
    from cassandra.policies import WhiteListRoundRobinPolicy

    cluster = Cluster(
        [address],
        port=CASSANDRA_PORT,
        connect_timeout=10,
        auth_provider=PlainTextAuthProvider(*DEFAULT_LOGIN),
        load_balancing_policy=WhiteListRoundRobinPolicy([address]),
        protocol_version=5,
        ssl_context=tls.context(),
    )
    return cluster, cluster.connect()
