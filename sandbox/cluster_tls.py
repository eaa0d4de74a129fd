"""The cluster sandbox's TLS material: a CA, one certificate per DB host (SAN: its DATA
address and its name) and a client certificate, in DIR/cluster/tls (tls_certs.make,
which reuses valid files, so every node action can ask for them again)."""

from __future__ import annotations

from pathlib import Path

from loadtower.sandbox import netns, tls_certs
from loadtower.sandbox.auth import ClientTls
from loadtower.sandbox.cluster_layout import DB_HOSTS, cluster_dir
from loadtower.sandbox.tls_certs import TlsFiles


def files(directory: Path) -> TlsFiles:
    names = [h.name for h in DB_HOSTS]
    return tls_certs.make(cluster_dir(directory), {n: [netns.data_address(n)] for n in names})


def client(tls: TlsFiles) -> ClientTls:
    """The orchestrator's side: the CA to trust and the client certificate."""
    return ClientTls(ca=tls.ca, cert=tls.client_cert, key=tls.client_key)
