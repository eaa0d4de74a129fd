"""Cassandra as the sandbox's ring (its kind's ``sandbox_ring``, sandbox/ring_engine.py).

The loopback sandbox's nodes (``loadtower sandbox up --cassandra-nodes N``) and the
cluster sandbox's (db1-db3 in two DCs) are Cassandra 5.0 nodes run from the
cassandra-all jars (jars.py) on the machine's Java (node.py); the sandbox's login is a
`loadtower` superuser role (login.py), readable in both of the cluster's DCs
(multi_dc.py). The sandbox chooses each node's place and runs its process; this says
how.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from loadtower.engines.cassandra.sandbox import login, multi_dc
from loadtower.engines.cassandra.sandbox.jars import CASSANDRA_VERSION, fetch_jars
from loadtower.engines.cassandra.sandbox.node import NodeSpec, NodeTls, check_java
from loadtower.sandbox.auth import ClientTls
from loadtower.sandbox.ring_engine import AdminTool, NodePlace, RingEngine


class CassandraRing(RingEngine):
    name = "cassandra"
    title = "Cassandra"
    version = CASSANDRA_VERSION
    username = login.USERNAME
    about = (f"N Cassandra {CASSANDRA_VERSION} nodes (127.0.0.1 .. 127.0.0.N, "
             f"PasswordAuthenticator on, a random password for the '{login.USERNAME}' role)")
    fetch_help = "download the Cassandra jars once (Maven Central)"
    native_port = 9042  # CQL
    storage_port = 7000
    admin_port = 7199  # JMX, for nodetool

    def fetch(self, quiet: bool = True) -> str:
        return f"Cassandra jars in {fetch_jars(quiet=quiet)}"

    def check_runtime(self) -> None:
        check_java()

    def node(self, place: NodePlace) -> NodeSpec:
        return NodeSpec(
            index=place.index,
            address=place.address,
            home=place.home,
            seed=place.seed,
            storage_port=place.storage_port,
            native_port=place.native_port,
            jmx_port=place.jmx_port,
            heap=place.heap,
            lean=place.lean,
            dc=place.dc,
            rack=place.rack,
            # internode encryption between DCs (within one, none)
            tls=NodeTls(ca=place.tls.ca, combined=place.tls.combined, internode="dc")
            if place.tls else None,
        )

    def node_log(self, home: Path) -> Path:
        return home / "logs" / "system.log"  # node.py's LOGBACK

    def can_login(self, address: str, port: int, directory: Path,
                  tls: ClientTls | None = None) -> bool:
        return login.can_login(address, port, self.password(directory), tls)

    def ensure_login(self, address: str, port: int, directory: Path,
                     tls: ClientTls | None = None, timeout: float = 120.0) -> None:
        login.ensure_role(address, port, self.password(directory), timeout=timeout, tls=tls)

    def spread_login(self, address: str, port: int, dcs: Sequence[str], tls: ClientTls,
                     admin: AdminTool, where: str) -> None:
        multi_dc.spread_login(address, port, dcs, tls, admin, where)


RING = CassandraRing()
