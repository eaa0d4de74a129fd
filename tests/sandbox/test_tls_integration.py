"""CQL over TLS against a real Cassandra 5.0 node: a small TLS sandbox of this module's
own (`loadtower sandbox up --tls` on 127.0.3.1, one node, no standby, no ClickHouse),
brought down in the end with the leftover check.

A quickstart-like run passes over TLS (the orchestrator's own queries, the agents'
driver sessions, the open-model sends on the Rust core, or from Python where it is not
built); a wrong CA file fails the run with one line naming the host; a client without
TLS is refused by the node; each CQL session driver (cassandra-driver, acsylla)
connects with the CA, the client certificate and a local DC.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from loadtower.agents.tls import TlsHandshakeError, TlsOptions, probe
from loadtower.engines.cassandra.orchestrator.cql_query import CqlQueryError, _cql_many
from loadtower.sandbox import tls_certs
from loadtower.store import StoreReader
from tests.conftest import parse_info, run_cli, sandbox_down
from tests.orchestrator.link_probe import pem_body_lines, tap_env, tapped
from tests.orchestrator.run_helpers import only_run, run_scenario

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]

ADDRESS = "127.0.3.1"
HAS_ACSYLLA = importlib.util.find_spec("acsylla") is not None
HAS_CORE = importlib.util.find_spec("loadtower_core") is not None  # the Rust core (default)


@pytest.fixture(scope="module")
def tls_box(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    directory = tmp_path_factory.mktemp("tls-sandbox").resolve()
    up = ["sandbox", "up", "--dir", str(directory), "--tls", "--first-address", ADDRESS,
          "--cassandra-nodes", "1", "--standby", "0", "--no-clickhouse", "--heap", "512M",
          "--timeout", "240", "--json"]
    try:
        yield parse_info(run_cli(up, timeout=480))
    finally:
        sandbox_down(directory, "the TLS sandbox")


def _options(info: dict, ca: str | None = None) -> TlsOptions:
    tls = info["cassandra"]["tls"]
    ca_file = ca or tls["ca"]
    return TlsOptions(
        ca_pem=Path(ca_file).read_text(),
        cert_pem=Path(tls["cert"]).read_text(),
        key_pem=Path(tls["key"]).read_text(),
        verify_hostname=True,
        ca_file=ca_file,
    )


def _data(event: dict) -> dict:
    data = event["data"]
    return json.loads(data) if isinstance(data, str) else data


def _other_ca(tmp_path: Path) -> str:
    """A CA that signed nothing the node has: a valid file, the wrong one."""
    return str(tls_certs.make(tmp_path / "other", {"x": [ADDRESS]}).ca)


def test_quickstart_runs_over_tls(tls_box: dict, tmp_path: Path) -> None:
    inventory = Path(tls_box["inventory"])
    assert "tls = true" in inventory.read_text()
    store = tmp_path / "runs.duckdb"
    done = run_scenario("quickstart", inventory, store, "dataset.records=2000",
                        "phases[1].duration=6s", "phases[1].rate=300")
    assert done.returncode == 0, done.stderr[-3000:]
    run = only_run(store)
    assert run["status"] == "completed"
    reader = StoreReader(store)
    summary = {(r["phase"], r["op"]): r for r in reader.phase_summary(run["id"])}
    assert summary[("1-load", "insert")]["ops"] == 2000
    assert summary[("1-load", "insert")]["errors"] == 0
    ran = summary[("ycsb-a", "read")]["ops"] + summary[("ycsb-a", "update")]["ops"]
    assert ran > 0 and summary[("ycsb-a", "read")]["errors"] == 0
    events = reader.events(run["id"])
    versions = json.loads(run["versions"]) if isinstance(run["versions"], str) \
        else run["versions"]
    assert versions["databases"]["db1"]["version"].startswith("5.0.")  # asked over TLS
    coordinators = {e["phase"]: _data(e) for e in events if e["kind"] == "coordinators"}
    assert coordinators == {"1-load": {"db1": 2000}, "ycsb-a": {"db1": ran}}
    paths = [e["message"] for e in events if e["kind"] == "cql_path"]
    if HAS_CORE:  # the open-model sends ran on the Rust core, over TLS
        assert paths and all("Rust core" in p and ", TLS," in p for p in paths), paths
    else:  # no core here: the Python lanes over the session driver, which does TLS
        assert paths and all(p.startswith("native_io rust: loadtower_core is not installed")
                             and "open-model sends run from Python" in p for p in paths), paths


def test_no_secret_crosses_the_workers_link(tls_box: dict, tmp_path: Path) -> None:
    """Every message the Locust master sent during a run over TLS (a tap on its sends,
    tests/orchestrator/link_probe.py): the phases name the password's and the client
    key's files on the agent host; neither the password nor a line of the key is there."""
    env, tap = tap_env(tmp_path / "tap")
    store = tmp_path / "runs.duckdb"
    argv = [sys.executable, "-m", "loadtower", "run", "quickstart", "--inventory",
            tls_box["inventory"], "--headless", "--store", str(store),
            "--set", "dataset.records=500", "--set", "phases[1].duration=3s"]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=400, env=env)
    assert done.returncode == 0, done.stderr[-3000:]
    assert only_run(store)["status"] == "completed"
    messages = tapped(tap)
    phases = [data for kind, _node, data in messages if kind == "lt_phase"]
    assert len(phases) >= 2 and all(b"key_ref" in p and b"password_ref" in p for p in phases)
    key_lines = pem_body_lines(Path(tls_box["cassandra"]["tls"]["key"]).read_text())
    assert key_lines
    leaks = [kind for kind, _node, data in messages
             if tls_box["cassandra"]["password"].encode() in data
             or any(line.encode() in data for line in key_lines)]
    assert leaks == []


def test_a_wrong_ca_fails_with_one_line_naming_the_host(tls_box: dict, tmp_path: Path) -> None:
    wrong = _other_ca(tmp_path)
    inventory = tmp_path / "wrong-ca.toml"
    text = Path(tls_box["inventory"]).read_text()
    inventory.write_text(re.sub(r'tls_ca_file = ".*"', f'tls_ca_file = "{wrong}"', text))
    store = tmp_path / "runs.duckdb"
    done = run_scenario("quickstart", inventory, store, "dataset.records=100",
                        "phases[1].duration=2s", timeout=120)
    assert done.returncode == 2
    port = tls_box["cassandra"]["port"]
    line = (f"db1 {ADDRESS}:{port}: TLS handshake failed: certificate verify failed: "
            f"unable to get local issuer certificate (CA {wrong})")
    assert line in done.stderr
    assert only_run(store)["status"] == "failed"
    assert StoreReader(store).phases(only_run(store)["id"]) == []  # no load was sent
    # an agent's own check, before its driver connects: the same line
    with pytest.raises(TlsHandshakeError) as info:
        probe([ADDRESS], port, _options(tls_box, wrong), {ADDRESS: "db1"})
    assert str(info.value) == line


@pytest.mark.skipif(not HAS_CORE, reason="the Rust core is not built (no cargo)")
def test_the_rust_core_refuses_a_wrong_ca_in_one_line(tls_box: dict, tmp_path: Path) -> None:
    """`loadtower_core.Core.connect` itself (the agent's probe aside): a wrong CA and a
    missing client certificate are one line naming the node and the cause; the agent's
    feed words it as the probe does."""
    from loadtower.engines.cassandra.agent.rust_feed import core_module, handshake_line

    cass = tls_box["cassandra"]
    wrong = _other_ca(tmp_path)
    right = _options(tls_box)
    where = f"{ADDRESS}:{cass['port']}"

    def connect(pem: dict) -> str:
        core = core_module().Core(1)
        try:
            with pytest.raises(ConnectionError) as refused:
                core.connect([ADDRESS], cass["port"], cass["username"], cass["password"], "ONE",
                             pem, None, 12_000, 5_000)
        finally:
            core.close()
        return str(refused.value)

    line = connect({"ca_pem": Path(wrong).read_text(), "cert_pem": right.cert_pem,
                    "key_pem": right.key_pem})
    assert line == (f"{where}: TLS handshake failed: certificate verify failed: unable to get "
                    "local issuer certificate")
    named = handshake_line(line, {"names": {ADDRESS: "db1"}, "tls": {"ca_file": wrong}})
    with pytest.raises(TlsHandshakeError) as probed:
        probe([ADDRESS], cass["port"], _options(tls_box, wrong), {ADDRESS: "db1"})
    assert named == str(probed.value)
    # the node requires a client certificate: without one it refuses (an alert), one line
    unsigned = connect({"ca_pem": right.ca_pem})
    assert unsigned.startswith(f"{where}: TLS handshake failed: "), unsigned
    assert "certificate" in unsigned and "\n" not in unsigned, unsigned


def test_a_client_without_tls_is_refused(tls_box: dict) -> None:
    """The orchestrator's own query client (cql_query: one cassandra-driver connection)."""
    cass = tls_box["cassandra"]
    creds = (ADDRESS, cass["port"], cass["username"], cass["password"])
    query = ["SELECT ssl_enabled FROM system_views.clients WHERE username = 'loadtower' "
             "ALLOW FILTERING"]
    with pytest.raises(CqlQueryError, match=f"connecting to {ADDRESS}:{cass['port']}: "):
        _cql_many(*creds, query, 10)
    # the same client with the CA and the client certificate is served
    [rows] = _cql_many(*creds, query, 10, _options(tls_box), ("db1", ADDRESS, cass["port"]))
    assert rows and all(row["ssl_enabled"] is True for row in rows)


def test_every_cql_driver_connects_with_tls_and_a_local_dc(tls_box: dict) -> None:
    from loadtower.engines.cassandra.agent.driver_session import DriverSession

    cass = tls_box["cassandra"]
    args = ([ADDRESS], cass["port"], cass["username"], cass["password"], "LOCAL_ONE")
    options = _options(tls_box)

    async def driver_session(session: Any) -> Any:
        await session.connect(*args, tls=options, local_dc="datacenter1")
        try:
            return await session.scalar("SELECT data_center FROM system.local")
        finally:
            await session.close()

    assert asyncio.run(driver_session(DriverSession())) == "datacenter1"
    if not HAS_ACSYLLA:
        return
    from loadtower.engines.cassandra.agent.acsylla_session import AcsyllaSession

    assert asyncio.run(driver_session(AcsyllaSession())) == "datacenter1"


def test_standalone_agent_run_over_tls_with_a_local_dc(tls_box: dict) -> None:
    """`loadtower agent run` (no orchestrator): the --tls-* files and --local-dc."""
    from tests.agents.agent_cli import run_agent

    tls = tls_box["cassandra"]["tls"]
    lines, summary, status = run_agent(
        tls_box, "--tls-ca-file", tls["ca"], "--tls-cert-file", tls["cert"],
        "--tls-key-file", tls["key"], "--local-dc", "datacenter1", "--keyspace", "lt_agent_tls",
        "--load", "--records", "300", "--rate", "100", "--duration", "2", timeout=180,
    )
    assert status == 0, lines[-5:]
    assert summary["ops"] > 0 and summary["errors"] == 0
    paths = [x for x in lines if x.get("kind") == "cql_path"]
    if HAS_CORE:  # the Rust core: TLS and the local DC through the driver
        assert paths and paths[-1]["data"]["tls"] is True, paths
        assert paths[-1]["data"]["local_dc"] == "datacenter1"
    else:  # no core here: the Python lanes over the session driver (TLS, local DC)
        assert paths and "open-model sends run from Python" in paths[-1]["message"], paths
