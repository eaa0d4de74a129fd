"""Which path the agent hosts' run phases sent on, from a run's stored events: each agent
process emits a `cql_path` event when it configures a phase on the Rust core, its data
`Core.path()` (driver, version, protocol, TLS, local DC); a phase the core could not run
has a `cql_path` event naming the Python path instead (agents/driver_loop.py)."""

from __future__ import annotations

import json
from typing import Any

from loadtower.store import StoreReader
from tests.cluster.conftest import AGENTS

RUST_DRIVER = "scylla-rust-driver"


def _line(event: dict[str, Any]) -> dict[str, Any]:
    data = event["data"]
    return json.loads(data) if isinstance(data, str) else dict(data or {})


def run_phase_paths(reader: StoreReader, run_id: str) -> dict[str, dict[str, list[Any]]]:
    """{run phase: {agent host: [the data of each of its `cql_path` events]}}: the data is
    `Core.path()` on the Rust core, None where the Python path ran (with the reason in the
    event's message, kept as `{"python": MESSAGE}`)."""
    phases = [p["name"] for p in reader.phases(run_id) if p["type"] == "run"]
    paths: dict[str, dict[str, list[Any]]] = {phase: {} for phase in phases}
    for event in reader.events(run_id):
        if event["kind"] != "cql_path" or event["phase"] not in paths:
            continue
        path = _line(event).get("data") or {"python": event["message"]}
        paths[event["phase"]].setdefault(str(event["host"]), []).append(path)
    return paths


def assert_on_rust_core(
    reader: StoreReader, run_id: str, *, tls: bool, local_dc: str | None
) -> dict[str, dict[str, list[Any]]]:
    """Every run phase ran on the Rust core on every agent host, with this TLS and local
    DC, and on no other path; the paths found are returned."""
    paths = run_phase_paths(reader, run_id)
    assert paths, "the run has no run phase"
    for phase, hosts in paths.items():
        assert set(hosts) == set(AGENTS), f"phase {phase}: cql_path events from {hosts}"
        for host, found in hosts.items():
            for path in found:
                assert path.get("driver") == RUST_DRIVER, f"{phase} on {host}: {path}"
                assert path.get("tls") is tls, f"{phase} on {host}: {path}"
                assert path.get("local_dc") == local_dc, f"{phase} on {host}: {path}"
    return paths
