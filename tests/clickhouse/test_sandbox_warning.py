"""A run warns, per ClickHouse host of a target, when that host is the sandbox's chdb
endpoint (its timings mean nothing), and only then: not for another server answering
/ping, not for a host that does not answer, not for a Cassandra target."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from loadtower.engines.clickhouse.orchestrator.node import warn_sandbox_endpoints
from loadtower.engines.clickhouse.sandbox.chdb_server import chdb_server
from loadtower.sandbox.processes import free_port
from loadtower.store import StoreReader
from tests.orchestrator.phase_fixtures import phase_context

pytestmark = [pytest.mark.integration, pytest.mark.timeout(120)]
pytest.importorskip("chdb")

SCENARIO = """\
name = "ch"
engine = "{engine}"
[target]
keyspace = "lt_warn"
[workloads.main]
preset = "ycsb-c"
[[phases]]
type = "load"
"""

INVENTORY = """\
[ssh]
user = "root"
key = "/tmp/key"
known_hosts = "/tmp/known_hosts"
[cassandra]
username = "u"
password = "p"
[clickhouse]
username = "u"
password = "p"
[hosts.db1]
address = "127.0.0.1"
roles = ["db"]
engine = "cassandra"
{hosts}
[hosts.agent1]
address = "127.0.0.1"
roles = ["agent"]
"""


class _Ping(BaseHTTPRequestHandler):
    """What any other server says to /ping: `Ok.`, no sandbox display name."""

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "4")
        self.end_headers()
        self.wfile.write(b"Ok.\n")

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture()
def other_server() -> Iterator[int]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Ping)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        thread.join(10)
        server.server_close()


def _host(name: str, port: int) -> str:
    return (
        f'[hosts.{name}]\naddress = "127.0.0.1"\nport = {port}\nroles = ["db"]\n'
        'engine = "clickhouse"\n'
    )


def _warnings(tmp_path: Path, engine: str, hosts: str) -> tuple[list[str], list[tuple]]:
    with phase_context(tmp_path, SCENARIO.format(engine=engine), INVENTORY.format(hosts=hosts)) as (
        ctx,
        _load,
        _actions,
    ):
        flagged = asyncio.run(warn_sandbox_endpoints(ctx, timeout_s=3))
    reader = StoreReader(tmp_path / "store.duckdb")
    run_id = reader.runs()[0]["id"]
    events = [(e["kind"], e["host"], e["message"]) for e in reader.events(run_id)]
    return flagged, events


def test_only_the_sandbox_endpoint_is_flagged(tmp_path: Path, other_server: int) -> None:
    with chdb_server("u", "p") as (_address, port):
        hosts = _host("ch1", port) + _host("ch2", other_server) + _host("ch3", free_port())
        flagged, events = _warnings(tmp_path, "clickhouse", hosts)
    assert flagged == ["ch1"]
    assert len(events) == 1
    kind, host, message = events[0]
    assert (kind, host) == ("warning", "ch1")
    assert "sandbox's chdb endpoint" in message and "TIMINGS MEAN NOTHING" in message


def test_a_cassandra_target_is_not_probed(tmp_path: Path) -> None:
    with chdb_server("u", "p") as (_address, port):
        flagged, events = _warnings(tmp_path, "cassandra", _host("ch1", port))
    assert flagged == [] and events == []
