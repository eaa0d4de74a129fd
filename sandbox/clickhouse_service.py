"""The sandbox's ClickHouse host: ``loadtower.sandbox.clickhouse_chdb`` as a server process.

`loadtower sandbox up` starts it when chdb is importable (``--clickhouse`` /
``--no-clickhouse``): ClickHouse's real engine (chdb) behind a small HTTP endpoint on
node 1's address and a free port (8123 when free), login ``loadtower`` with a random
password kept in DIR/secrets/clickhouse.password, data in DIR/clickhouse/data (kept
across restarts), output in DIR/logs/clickhouse.log. The generated inventory's host
``ch1`` reaches it; its ``start``/``stop``/``kill``/``restart``/``status`` actions call
`loadtower sandbox clickhouse ACTION --dir DIR`.

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

from loadtower.errors import LoadtowerError
from loadtower.sandbox.auth import secret
from loadtower.sandbox.state import SandboxState

HOST = "ch1"
USERNAME = "loadtower"
PREFERRED_PORT = 8123
ACTIONS = ("start", "stop", "kill", "restart", "status")  # `loadtower sandbox clickhouse ...`
WARNING = (
    "ClickHouse timings from the sandbox's chdb endpoint MEAN NOTHING: it is ClickHouse's "
    "engine (chdb) behind one Python HTTP server serving one query at a time; use it to "
    "check what runs and what is recorded, never how fast"
)


def available() -> bool:
    """True when chdb (the `chdb-core` package) is importable here."""
    return importlib.util.find_spec("chdb") is not None


def engine_version() -> str:
    try:
        return f"chdb-core {importlib.metadata.version('chdb-core')}"
    except importlib.metadata.PackageNotFoundError:
        return "chdb"


def enabled(state: SandboxState) -> bool:
    return "clickhouse" in state.ports


def address(state: SandboxState) -> str:
    return state.nodes[1].address


def password_file(directory: Path) -> Path:
    return directory / "secrets" / "clickhouse.password"


def log_file(directory: Path) -> Path:
    return directory / "logs" / "clickhouse.log"


def command(directory: Path, state: SandboxState) -> list[str]:
    secret(password_file(directory))  # generated once
    data = directory / "clickhouse" / "data"
    data.mkdir(parents=True, exist_ok=True)
    return [
        sys.executable,
        "-m",
        "loadtower.sandbox.clickhouse_chdb",
        "--address",
        address(state),
        "--port",
        str(state.ports["clickhouse"]),
        "--user",
        USERNAME,
        "--password-file",
        str(password_file(directory)),
        "--data",
        str(data),
    ]


def ping(host: str, port: int, timeout: float = 2.0) -> bool:
    try:
        with urllib.request.urlopen(f"http://{host}:{port}/ping", timeout=timeout) as reply:  # noqa: S310 - loopback
            return reply.read().startswith(b"Ok.")
    except OSError:
        return False


def wanted(flag: bool | None) -> bool:
    """--clickhouse / --no-clickhouse / neither (None: when chdb is importable)."""
    if flag is None:
        return available()
    if flag and not available():
        raise LoadtowerError(
            "--clickhouse: chdb is not importable here (pip install chdb-core), "
            "or use --no-clickhouse"
        )
    return flag
