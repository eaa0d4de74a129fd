"""quickstart on the cluster sandbox with TLS on: the Locust workers of both agent hosts
join the master through SSH reverse forwards from their own namespaces, and both report
interval lines; their run phase ran on the Rust core (its `cql_path` events), over TLS.
The Cassandra nodes refuse a client without TLS; a run whose inventory names another CA
fails before any load with one line naming the node and the cause, exit 2, and the
core's own connect with that CA fails with the same cause in one line."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from loadtower.store import StoreReader
from tests.cluster.conftest import AGENTS, FirstRun
from tests.cluster.core_path import assert_on_rust_core
from tests.orchestrator.run_helpers import only_run, run_scenario

pytestmark = [pytest.mark.integration, pytest.mark.timeout(1200)]


def test_quickstart_with_tls_on_both_agent_hosts(cluster: dict, first_run: FirstRun) -> None:
    assert first_run.done.returncode == 0, first_run.done.stderr[-3000:]
    run = only_run(first_run.store)
    reader = StoreReader(first_run.store)
    assert "tls = true" in reader.run(run["id"])["inventory_text"]
    _cols, rows = reader.sql(
        f"SELECT host, sum(ops) FROM op_intervals WHERE run_id = '{run['id']}' GROUP BY host"
    )
    ops = {host: total for host, total in rows}
    assert set(ops) == set(AGENTS), ops
    assert all(total > 0 for total in ops.values()), ops
    # both agent hosts got the core through the bootstrap's wheelhouse, and ran on it
    assert_on_rust_core(reader, run["id"], tls=True, local_dc=None)


def test_a_client_without_tls_is_refused(cluster: dict) -> None:
    from cassandra.auth import PlainTextAuthProvider
    from cassandra.cluster import Cluster, NoHostAvailable
    from cassandra.policies import WhiteListRoundRobinPolicy

    from loadtower.engines.cassandra.sandbox.ring import RING

    address = cluster["cassandra"]["nodes"][0]["address"]
    plain = Cluster(
        [address],
        port=cluster["cassandra"]["port"],
        connect_timeout=5,
        auth_provider=PlainTextAuthProvider("loadtower", RING.password(_dir(cluster))),
        load_balancing_policy=WhiteListRoundRobinPolicy([address]),
        protocol_version=5,
    )
    try:
        with pytest.raises(NoHostAvailable):
            plain.connect()
    finally:
        plain.shutdown()


def test_a_wrong_ca_fails_before_load_with_one_line(
    cluster: dict, first_run: FirstRun, tmp_path: Path
) -> None:
    from loadtower.sandbox import tls_certs

    port = cluster["cassandra"]["port"]
    nodes = {n["host"]: f"{n['address']}:{port}" for n in cluster["cassandra"]["nodes"]
             if n["state"] == "up"}
    wrong = str(tls_certs.make(tmp_path / "other", {"x": ["198.18.0.11"]}).ca)  # signed nothing
    inventory = tmp_path / "wrong-ca.toml"
    text = (_dir(cluster) / "inventory.toml").read_text()
    inventory.write_text(re.sub(r'(?m)^tls_ca_file = ".*"$', f'tls_ca_file = "{wrong}"', text))
    store = tmp_path / "runs.duckdb"
    done = run_scenario("quickstart", inventory, store, timeout=300)
    why = "TLS handshake failed: certificate verify failed: unable to get local issuer certificate"
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 2, done.stderr[-3000:]
    # the orchestrator checks the nodes at once: the line names the first that answered
    assert len(lines) == 1, lines
    assert any(lines[0].endswith(f"{host} {where}: {why} (CA {wrong})")
               for host, where in nodes.items()), lines
    run = only_run(store)
    assert run["status"] == "failed"
    assert StoreReader(store).phases(run["id"]) == []  # no load was sent
    _core_refuses(cluster, wrong, f"{nodes['db1']}: {why}")


def _core_refuses(cluster: dict, ca_file: str, line: str) -> None:
    """`loadtower_core.Core.connect` to db1 with that CA (and the right client certificate)."""
    from loadtower.engines.cassandra.agent.rust_feed import core_module
    from loadtower.engines.cassandra.sandbox.ring import RING

    module = core_module()
    if module is None:
        pytest.fail("the Rust core is not built here (make install builds it with cargo)")
    tls = cluster["cassandra"]["tls"]
    pem = {"ca_pem": Path(ca_file).read_text(), "cert_pem": Path(tls["client_cert"]).read_text(),
           "key_pem": Path(tls["client_key"]).read_text()}
    core = module.Core(1)
    try:
        with pytest.raises(ConnectionError) as refused:
            core.connect(["198.18.0.11"], cluster["cassandra"]["port"],
                         "loadtower", RING.password(_dir(cluster)), "ONE", pem, None, 12_000, 5_000)
    finally:
        core.close()
    assert str(refused.value) == line


def _dir(cluster: dict) -> Path:
    return Path(cluster["dir"])
