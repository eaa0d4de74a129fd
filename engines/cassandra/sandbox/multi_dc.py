"""The sandbox's Cassandra login across data centres (the cluster sandbox's two DCs:
`RingEngine.spread_login`, sandbox/ring_engine.py).

Cassandra creates ``system_auth`` with SimpleStrategy and one replica, so a role's row
lives on one node of either DC; a login in dc1 reads it at LOCAL_ONE / LOCAL_QUORUM and
fails when that node is in dc2 ("Cannot achieve consistency level LOCAL_QUORUM"). As a
real multi-DC cluster does, ``system_auth`` gets NetworkTopologyStrategy with one
replica in each DC before the role is created, and a repair of it puts the rows that
already exist (the default superuser) on their new replicas. Then the sandbox role is
made over TLS (the ring's ``ensure_login``, login.py).
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from loadtower.engines.cassandra.sandbox.login import DEFAULT_LOGIN, session
from loadtower.errors import LoadtowerError
from loadtower.sandbox.auth import ClientTls
from loadtower.sandbox.ring_engine import AdminTool


def system_auth_replication(dcs: Sequence[str]) -> str:
    """``{'class': 'NetworkTopologyStrategy', 'dc1': 1, 'dc2': 1}`` for these DCs."""
    return ("{'class': 'NetworkTopologyStrategy', "
            + ", ".join(f"'{dc}': 1" for dc in sorted(set(dcs))) + "}")


def spread_system_auth(address: str, port: int, dcs: Sequence[str], tls: ClientTls,
                       timeout: float = 120.0) -> None:
    """ALTER system_auth to one replica per DC, as the default superuser (while it can
    still log in)."""
    deadline = time.monotonic() + timeout
    last: Exception | None = None
    while time.monotonic() < deadline:
        try:
            cluster, cql = session(address, port, *DEFAULT_LOGIN, tls)
        except Exception as exc:  # noqa: BLE001 - the default role appears a little after start
            last = exc
            time.sleep(1.0)
            continue
        try:
            cql.execute(
                f"ALTER KEYSPACE system_auth WITH replication = {system_auth_replication(dcs)}"
            )
        finally:
            cluster.shutdown()
        return
    raise LoadtowerError(f"could not set system_auth's replication on {address}:{port}: {last}")


def spread_login(address: str, port: int, dcs: Sequence[str], tls: ClientTls,
                 admin: AdminTool, where: str) -> None:
    """system_auth in every DC, then repaired on the node at address:port (``where``)."""
    spread_system_auth(address, port, dcs, tls)
    repair = admin("repair", "-full", "system_auth", timeout=300)
    if repair.returncode != 0:
        raise LoadtowerError(
            f"nodetool repair system_auth on {where} failed: "
            f"{(repair.stderr or repair.stdout).strip()[-800:]}"
        )
