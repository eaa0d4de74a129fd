"""The sandbox's ClickHouse host ``ch1``: ``chdb_server.py`` (ClickHouse's engine, chdb,
behind a small HTTP endpoint) as a server process.

`loadtower sandbox up` starts it when chdb is importable (``--clickhouse`` /
``--no-clickhouse``): on node 1's address and a free port (8123 when free), login
``loadtower`` with a random password kept in DIR/secrets/clickhouse.password, data in
DIR/clickhouse/data (kept across restarts), output in DIR/logs/clickhouse.log. The
generated inventory's host ``ch1`` reaches it; its ``start``/``stop``/``kill``/
``restart``/``status`` actions call `loadtower sandbox clickhouse ACTION --dir DIR`
(sandbox/engine_services.py runs it like every engine host).

ClickHouse timings from it MEAN NOTHING (one Python HTTP server, one lock, one query at
a time): it is there so that the product's real clickhouse-connect path runs against
ClickHouse's real engine, SQL and error codes, not to measure ClickHouse.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import sys
import urllib.request
from pathlib import Path

from loadtower.sandbox.engine_services import EngineService
from loadtower.sandbox.state import SandboxState
from loadtower.sandbox.toml_values import q

SERVER_MODULE = "loadtower.engines.clickhouse.sandbox.chdb_server"


class ClickhouseService(EngineService):
    name = "clickhouse"
    host = "ch1"
    title = "ClickHouse"
    server = "ClickHouse (chdb)"
    preferred_port = 8123
    up_help = ("run the ClickHouse host (chdb endpoint; its timings mean nothing); "
               "default: when chdb is importable. --no-clickhouse stops a running one")
    warning = (
        "ClickHouse timings from the sandbox's chdb endpoint MEAN NOTHING: it is ClickHouse's "
        "engine (chdb) behind one Python HTTP server serving one query at a time; use it to "
        "check what runs and what is recorded, never how fast"
    )
    running_note = "chdb endpoint, timings mean nothing"
    about = (
        "When chdb is importable (pip install chdb-core) it also runs a ClickHouse host: "
        "ClickHouse's real engine (chdb) behind a small HTTP endpoint on node 1's address "
        "(port 8123 when free), with its own login. ClickHouse TIMINGS FROM THAT ENDPOINT "
        "MEAN NOTHING (one Python HTTP server, one query at a time): it checks what runs "
        "and what is recorded, not speed."
    )
    cluster_host = "ch1"  # the cluster sandbox's namespace host (port 8123 there)

    def available(self) -> bool:
        """True when chdb (the `chdb-core` package) is importable here."""
        return importlib.util.find_spec("chdb") is not None

    def missing_reason(self) -> str:
        return "chdb is not importable here (pip install chdb-core)"

    def engine(self) -> str:
        try:
            return f"chdb-core {importlib.metadata.version('chdb-core')}"
        except importlib.metadata.PackageNotFoundError:
            return "chdb"

    def argv(self, directory: Path, host: str, port: int, data_root: Path | None = None
             ) -> list[str]:
        self.password(directory)  # generated once
        data = (data_root or directory) / "clickhouse" / "data"
        data.mkdir(parents=True, exist_ok=True)
        return [sys.executable, "-m", SERVER_MODULE, "--address", host, "--port", str(port),
                "--user", self.username, "--password-file", str(self.password_file(directory)),
                "--data", str(data)]

    def ping(self, host: str, port: int, timeout: float = 2.0) -> bool:
        try:
            with urllib.request.urlopen(f"http://{host}:{port}/ping", timeout=timeout) as reply:  # noqa: S310 - loopback
                return reply.read().startswith(b"Ok.")
        except OSError:
            return False

    def url(self, host: str, port: int) -> str:
        return f"http://{host}:{port}"

    def inventory_section(self, directory: Path, state: SandboxState) -> list[str]:
        """``[clickhouse]`` credentials (host ch1 has no ``compact`` action: the compaction
        phase then runs OPTIMIZE TABLE ... FINAL itself, table by table)."""
        return [
            "# ch1: ClickHouse's engine (chdb) behind the sandbox's HTTP endpoint.",
            "# ClickHouse TIMINGS FROM IT MEAN NOTHING (one Python server, one query at a time).",
            "[clickhouse]",
            f"username = {q(self.username)}",
            f"password_file = {q(str(self.password_file(directory)))}",
        ]

    def cluster_inventory_section(self, directory: Path) -> list[str]:
        return [
            "# ch1: ClickHouse's engine (chdb) behind the sandbox's HTTP endpoint, in its own",
            "# namespace. ClickHouse TIMINGS FROM IT MEAN NOTHING (one query at a time).",
            "[clickhouse]",
            f"username = {q(self.username)}",
            f"password_file = {q(str(self.password_file(directory)))}",
        ]

    def host_keys(self, state: SandboxState) -> list[str]:
        return [f"port = {state.ports[self.name]}"]


SERVICE = ClickhouseService()
