"""quickstart on the cluster sandbox with TLS on: the Locust workers of both agent hosts
join the master through SSH reverse forwards from their own namespaces, and both report
interval lines; the Cassandra nodes refuse a client without TLS."""

from __future__ import annotations

from pathlib import Path

import pytest

from loadtower.store import StoreReader
from tests.cluster.conftest import AGENTS, FirstRun
from tests.orchestrator.run_helpers import only_run

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


def test_a_client_without_tls_is_refused(cluster: dict) -> None:
    from cassandra.auth import PlainTextAuthProvider
    from cassandra.cluster import Cluster, NoHostAvailable
    from cassandra.policies import WhiteListRoundRobinPolicy

    from loadtower.sandbox.auth import password

    address = cluster["cassandra"]["nodes"][0]["address"]
    plain = Cluster(
        [address],
        port=cluster["cassandra"]["port"],
        connect_timeout=5,
        auth_provider=PlainTextAuthProvider("loadtower", password(_dir(cluster))),
        load_balancing_policy=WhiteListRoundRobinPolicy([address]),
        protocol_version=5,
    )
    try:
        with pytest.raises(NoHostAvailable):
            plain.connect()
    finally:
        plain.shutdown()


def _dir(cluster: dict) -> Path:
    return Path(cluster["dir"])
