"""The sandbox's MongoDB host ``mongo1``: FerretDB (sandbox/ferretdb.py) on SQLite.

`loadtower sandbox up` starts it when the FerretDB binary is built (``--mongodb`` /
``--no-mongodb``; `loadtower sandbox fetch` builds it when Go is on PATH): on node 1's
address (127.0.0.1 in the default sandbox), port 27017 when free, data in
DIR/ferretdb/data (SQLite files, kept across restarts), output in DIR/logs/mongodb.log.
Login ``loadtower`` with a random password kept in DIR/secrets/mongodb.password (mode
0600): FerretDB creates that user at its first start (SCRAM; the password reaches it
through its environment, never its command line) and refuses wrong passwords and
unauthenticated commands. The inventory's host ``mongo1`` reaches it; its actions call
`loadtower sandbox mongodb ACTION --dir DIR`.

Its timings are FerretDB's (a Go proxy translating MongoDB's protocol into SQLite
queries), not MongoDB's: it is there so that the product's real pymongo path runs
against a real MongoDB-protocol server, not to measure MongoDB.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from loadtower.errors import LoadtowerError
from loadtower.sandbox import ferretdb
from loadtower.sandbox import processes as procs
from loadtower.sandbox import state as st
from loadtower.sandbox.auth import secret

HOST = "mongo1"
SERVICE = "mongodb"  # its key in the state's ports and services
USERNAME = "loadtower"
AUTH_SOURCE = "admin"
PREFERRED_PORT = 27017
ACTIONS = ("start", "stop", "kill", "restart", "status")  # `loadtower sandbox mongodb ...`
ENGINE = f"FerretDB {ferretdb.FERRETDB_VERSION} (SQLite backend)"
WARNING = (
    f"MongoDB timings from the sandbox are {ENGINE}'s, NOT MongoDB's: FerretDB translates "
    "the MongoDB protocol into SQLite queries; use it to check what runs and what is "
    "recorded, never how fast MongoDB is"
)
START_TIMEOUT_S = 60.0

Wait = Callable[[str, procs.ProcessRecord | None, Callable[[], bool], float], None]


def available() -> bool:
    """True when the FerretDB binary is built (`loadtower sandbox fetch`)."""
    return ferretdb.available()


def missing_reason() -> str:
    return (
        f"FerretDB {ferretdb.FERRETDB_VERSION} is not built (`loadtower sandbox fetch` "
        "builds it when Go is on PATH): the sandbox runs without MongoDB"
    )


def enabled(state: st.SandboxState) -> bool:
    return SERVICE in state.ports


def address(state: st.SandboxState) -> str:
    return state.nodes[1].address


def password_file(directory: Path) -> Path:
    return directory / "secrets" / "mongodb.password"


def log_file(directory: Path) -> Path:
    return directory / "logs" / "mongodb.log"


def home(directory: Path) -> Path:
    """FerretDB's state dir; its SQLite files are in ``data/`` below it."""
    return directory / "ferretdb"


def url(host: str, port: int) -> str:
    """The connection string, without credentials (they come from the password file)."""
    return f"mongodb://{host}:{port}/?authSource={AUTH_SOURCE}"


def command(directory: Path, state: st.SandboxState) -> list[str]:
    data = home(directory) / "data"
    data.mkdir(parents=True, exist_ok=True)
    return [
        str(ferretdb.binary_path()),
        "--handler=sqlite",
        f"--sqlite-url=file:{data}/",
        f"--listen-addr={address(state)}:{state.ports[SERVICE]}",
        f"--state-dir={home(directory)}",
        "--telemetry=disable",
        "--debug-addr=-",  # no metrics/pprof listener: node metrics come from serverStatus
        "--test-enable-new-auth",  # SCRAM users in admin.system.users: wrong passwords fail
        f"--setup-username={USERNAME}",
        f"--setup-database={AUTH_SOURCE}",
    ]


def environment(directory: Path) -> dict[str, str]:
    """FerretDB's environment: the setup password (generated once) stays off its argv."""
    return {**os.environ, "FERRETDB_SETUP_PASSWORD": secret(password_file(directory))}


def ping(host: str, port: int, timeout: float = 2.0) -> bool:
    """True when a MongoDB `hello` (no login needed) is answered within ``timeout``."""
    import pymongo
    from pymongo.errors import PyMongoError

    ms = int(timeout * 1000)
    client: pymongo.MongoClient = pymongo.MongoClient(
        host,
        port,
        directConnection=True,
        serverSelectionTimeoutMS=ms,
        connectTimeoutMS=ms,
        socketTimeoutMS=ms,
    )
    try:
        return bool(client.admin.command("hello").get("ok"))
    except PyMongoError:
        return False
    finally:
        client.close()


def pick_port(state: st.SandboxState) -> int:
    """27017 when free on the host's address, another free port otherwise."""
    taken = {p for name, p in state.ports.items() if name != SERVICE}
    taken |= {n.jmx_port for n in state.nodes.values()}
    return procs.free_port([address(state)], PREFERRED_PORT, taken)


def start(directory: Path, state: st.SandboxState, wait: Wait, timeout: float) -> None:
    """Start FerretDB unless it runs; return once it answers `hello`."""
    if procs.is_alive(state.services.get(SERVICE)):
        return
    if not available():
        raise LoadtowerError(missing_reason())
    host, port = address(state), state.ports[SERVICE]
    record = procs.spawn(command(directory, state), log_file(directory), env=environment(directory))
    state.services[SERVICE] = record
    st.save(directory, state)
    wait(f"FerretDB on {host}:{port}", record, lambda: ping(host, port), min(timeout, START_TIMEOUT_S))


def stop(state: st.SandboxState) -> None:
    if SERVICE in state.services:
        procs.stop(state.services[SERVICE])
        state.services[SERVICE] = None


def reconcile(
    directory: Path, state: st.SandboxState, wanted: bool, wait: Wait, timeout: float
) -> None:
    """`up` on a running sandbox: start FerretDB when wanted and not running (on a free
    port if its own was taken meanwhile); stop and drop it when not wanted."""
    if not wanted:
        if enabled(state):
            stop(state)
            state.services.pop(SERVICE, None)
            state.ports.pop(SERVICE, None)
            st.save(directory, state)
        return
    stopped = not procs.is_alive(state.services.get(SERVICE))
    if not enabled(state) or (
        stopped and not procs.port_free(address(state), state.ports[SERVICE])
    ):
        state.ports[SERVICE] = pick_port(state)
        st.save(directory, state)
    start(directory, state, wait, timeout)


def act(
    directory: Path, state: st.SandboxState, action: str, wait: Wait, timeout: float
) -> tuple[bool, str]:
    """start / stop / kill / restart / status (under the sandbox's lock): (running, a line)."""
    if action not in ACTIONS:
        raise LoadtowerError(f"unknown MongoDB action '{action}' (one of {', '.join(ACTIONS)})")
    if not enabled(state):
        raise LoadtowerError(
            f"the sandbox in {directory} has no MongoDB host "
            f"(`loadtower sandbox up --dir {directory} --mongodb`)"
        )
    record = state.services.get(SERVICE)
    if action in ("stop", "kill", "restart"):
        if action == "kill":
            procs.kill(record)
        stop(state)
        st.save(directory, state)
    if action in ("start", "restart"):
        start(directory, state, wait, timeout)
    record = state.services.get(SERVICE)
    where = f"{address(state)}:{state.ports[SERVICE]}"
    if record is None or not procs.is_alive(record):
        return False, f"mongodb {where}: stopped"
    return True, f"mongodb {where}: up (pid {record.pid}; {ENGINE}, timings are FerretDB's)"


def alive(state: st.SandboxState) -> bool:
    """Not enabled, or its process runs (what `up` means for the whole sandbox)."""
    return not enabled(state) or procs.is_alive(state.services.get(SERVICE))


def info(directory: Path, state: st.SandboxState) -> dict:
    if not enabled(state):
        reason = "not started (--no-mongodb)" if available() else missing_reason()
        return {"enabled": False, "up": False, "engine": ENGINE, "reason": reason}
    record = state.services.get(SERVICE)
    running = procs.is_alive(record)
    host, port = address(state), state.ports[SERVICE]
    pwd_file = password_file(directory)
    return {
        "enabled": True,
        "host": HOST,
        "address": host,
        "port": port,
        "url": url(host, port),
        "auth_source": AUTH_SOURCE,
        "username": USERNAME,
        "password": pwd_file.read_text().strip() if pwd_file.exists() else None,
        "password_file": str(pwd_file),
        "up": running and ping(host, port),
        "pid": record.pid if running and record else None,
        "log": str(log_file(directory)),
        "engine": ENGINE,
        "warning": WARNING,
    }
