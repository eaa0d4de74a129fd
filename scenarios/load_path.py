"""What `check` says of the load path each CQL target asks for: the agents' sender for
open-model run phases (phases the Rust core does not bind run on Python lanes over the
session driver), TLS and the local data centre. The path that actually ran is the
agents' `cql_path` event of each phase (stored with the run's events)."""

from __future__ import annotations

from loadtower.protocol.engine_kinds import kind
from loadtower.scenarios.models import Credentials, Inventory, Scenario, Target

SENDERS = {
    "rust": "Rust core on scylla-rust-driver (CQL v4, token-aware, in-flight limit per node)",
    "python": "Python lanes over the session driver",
}


def _line(name: str, engine: str, target: Target, creds: Credentials) -> str:
    sender = SENDERS.get(str(target.native_io), str(target.native_io))
    if target.native_io == "python":
        sender += f" ({target.driver})"
    tls = "TLS on" if creds.tls else "TLS off"
    if creds.tls and not creds.tls_verify_hostname:
        tls += " (host names not checked)"
    dc = f"local DC {target.local_dc}" if target.local_dc else "no local DC (nodes of every DC)"
    label = f"{name} ({engine})" if name else engine
    return f"load path, {label}: {sender}; {tls}; {dc}"


def load_path_lines(scenario: Scenario, inventory: Inventory) -> list[str]:
    """One line per CQL target that runs (none for other engines)."""
    targets: list[tuple[str, str, Target]] = [
        (n, scenario.targets[n].engine, scenario.targets[n]) for n in scenario.target_names()
    ] or [("", scenario.engine, scenario.target)]
    return [_line(name, engine, target, getattr(inventory, engine))
            for name, engine, target in targets if kind(engine).family == "cql"]
