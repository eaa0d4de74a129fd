"""What `check` says of the load path each CQL target asks for: the agents' sender for
open-model run phases, TLS and the local data centre. The path that actually ran is the
agents' `cql_path` event of each phase (stored with the run's events)."""

from __future__ import annotations

from loadtower.scenarios.models import Credentials, Inventory, Scenario, Target

CQL_ENGINES = ("cassandra", "scylla")
SENDERS = {
    "rust": "Rust core on scylla-rust-driver (CQL v4, token-aware, in-flight limit per node)",
    "wire": "loadtower's CQL v4 connections (no TLS, no DC filter)",
    "driver": "the C++ driver under acsylla",
}


def _line(name: str, engine: str, target: Target, creds: Credentials) -> str:
    io = str(target.native_io)
    if io == "wire" and (creds.tls or target.local_dc):
        io = "driver"  # the wire connections have neither TLS nor a DC filter
    sender = SENDERS.get(io, io)
    tls = "TLS on" if creds.tls else "TLS off"
    if creds.tls and not creds.tls_verify_hostname:
        tls += " (host names not checked)"
    dc = f"local DC {target.local_dc}" if target.local_dc else "every DC local"
    label = f"{name} ({engine})" if name else engine
    return f"load path, {label}: {sender}; {tls}; {dc}"


def load_path_lines(scenario: Scenario, inventory: Inventory) -> list[str]:
    """One line per CQL target that runs (none for other engines)."""
    targets: list[tuple[str, str, Target]] = [
        (n, scenario.targets[n].engine, scenario.targets[n]) for n in scenario.target_names()
    ] or [("", scenario.engine, scenario.target)]
    return [_line(name, engine, target, getattr(inventory, engine))
            for name, engine, target in targets if engine in CQL_ENGINES]
