"""The ``load_path`` hook of Cassandra and ScyllaDB: what `check` says of the load path a
CQL target asks for: the agents' sender for open-model run phases (phases the Rust core
does not bind run on Python lanes over the session driver), TLS and the local data
centre. The path that actually ran is the agents' `cql_path` event of each phase (stored
with the run's events)."""

from __future__ import annotations

from loadtower.engines.cassandra.orchestrator.target_keys import CqlTargetKeys
from loadtower.scenarios.models import Credentials, Target

SENDERS = {
    "rust": "Rust core on scylla-rust-driver (CQL v4, token-aware, in-flight limit per node)",
    "python": "Python lanes over the session driver",
}


def load_path(label: str, target: Target, creds: Credentials) -> str:
    """`load path, LABEL: sender; TLS; data centre`."""
    sender = SENDERS.get(str(target.native_io), str(target.native_io))
    if target.native_io == "python":
        sender += f" ({target.driver})"
    tls = "TLS on" if creds.tls else "TLS off"
    if creds.tls and not creds.tls_verify_hostname:
        tls += " (host names not checked)"
    local_dc = CqlTargetKeys.of(target).local_dc
    dc = f"local DC {local_dc}" if local_dc else "no local DC (nodes of every DC)"
    return f"load path, {label}: {sender}; {tls}; {dc}"
