"""The sandbox's MongoDB host ``mongo1``: FerretDB (``ferretdb.py``) on SQLite.

`loadtower sandbox up` starts it when the FerretDB binary is built (``--mongodb`` /
``--no-mongodb``; `loadtower sandbox fetch` builds it when Go is on PATH): on node 1's
address (127.0.0.1 in the default sandbox), port 27017 when free, data in
DIR/ferretdb/data (SQLite files, kept across restarts), output in DIR/logs/mongodb.log.
Login ``loadtower`` with a random password kept in DIR/secrets/mongodb.password (mode
0600): FerretDB creates that user at its first start (SCRAM; the password reaches it
through its environment, never its command line) and refuses wrong passwords and
unauthenticated commands. The inventory's host ``mongo1`` reaches it; its actions call
`loadtower sandbox mongodb ACTION --dir DIR` (sandbox/engine_services.py runs it like
every engine host).

Its timings are FerretDB's (a Go proxy translating MongoDB's protocol into SQLite
queries), not MongoDB's: it is there so that the product's real pymongo path runs
against a real MongoDB-protocol server, not to measure MongoDB.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from loadtower.engines.mongodb.sandbox import ferretdb
from loadtower.errors import LoadtowerError
from loadtower.sandbox.engine_services import EngineService
from loadtower.sandbox.state import SandboxState
from loadtower.sandbox.toml_values import q

AUTH_SOURCE = "admin"
ENGINE = f"FerretDB {ferretdb.FERRETDB_VERSION} (SQLite backend)"


def home(directory: Path) -> Path:
    """FerretDB's state dir; its SQLite files are in ``data/`` below it."""
    return directory / "ferretdb"


def url(host: str, port: int) -> str:
    """The connection string, without credentials (they come from the password file)."""
    return f"mongodb://{host}:{port}/?authSource={AUTH_SOURCE}"


class MongodbService(EngineService):
    name = "mongodb"
    host = "mongo1"
    title = "MongoDB"
    server = "FerretDB"
    preferred_port = 27017
    up_help = ("run the MongoDB host (FerretDB on SQLite; its timings are FerretDB's, not "
               "MongoDB's); default: when FerretDB is built. --no-mongodb stops a running one")
    warning = (
        f"MongoDB timings from the sandbox are {ENGINE}'s, NOT MongoDB's: FerretDB translates "
        "the MongoDB protocol into SQLite queries; use it to check what runs and what is "
        "recorded, never how fast MongoDB is"
    )
    running_note = f"{ENGINE}, timings are FerretDB's"
    fetch_help = ("fail when FerretDB cannot be built (no Go) instead of going on without "
                  "MongoDB")
    about = (
        f"When FerretDB is built (`fetch` builds it once when Go is on PATH) it also runs a "
        f"MongoDB host: FerretDB {ferretdb.FERRETDB_VERSION} on SQLite on node 1's address "
        "(port 27017 when free), login 'loadtower' with a random password. MONGODB TIMINGS "
        "FROM IT ARE FERRETDB'S, NOT MONGODB'S."
    )

    def available(self) -> bool:
        """True when the FerretDB binary is built (`loadtower sandbox fetch`)."""
        return ferretdb.available()

    def missing_reason(self) -> str:
        return (
            f"FerretDB {ferretdb.FERRETDB_VERSION} is not built (`loadtower sandbox fetch` "
            "builds it when Go is on PATH): the sandbox runs without MongoDB"
        )

    def engine(self) -> str:
        return ENGINE

    def argv(self, directory: Path, host: str, port: int, data_root: Path | None = None
             ) -> list[str]:
        state_dir = home(data_root or directory)
        data = state_dir / "data"
        data.mkdir(parents=True, exist_ok=True)
        return [
            str(ferretdb.binary_path()),
            "--handler=sqlite",
            f"--sqlite-url=file:{data}/",
            f"--listen-addr={host}:{port}",
            f"--state-dir={state_dir}",
            "--telemetry=disable",
            "--debug-addr=-",  # no metrics/pprof listener: node metrics come from serverStatus
            "--test-enable-new-auth",  # SCRAM users in admin.system.users: wrong passwords fail
            f"--setup-username={self.username}",
            f"--setup-database={AUTH_SOURCE}",
        ]

    def environment(self, directory: Path) -> dict[str, str]:
        """FerretDB's environment: the setup password (generated once) stays off its argv."""
        return {**os.environ, "FERRETDB_SETUP_PASSWORD": self.password(directory)}

    def ping(self, host: str, port: int, timeout: float = 2.0) -> bool:
        """True when a MongoDB `hello` (no login needed) is answered within ``timeout``."""
        import pymongo
        from pymongo.errors import PyMongoError

        ms = int(timeout * 1000)
        client: pymongo.MongoClient = pymongo.MongoClient(
            host, port, directConnection=True, serverSelectionTimeoutMS=ms,
            connectTimeoutMS=ms, socketTimeoutMS=ms,
        )
        try:
            return bool(client.admin.command("hello").get("ok"))
        except PyMongoError:
            return False
        finally:
            client.close()

    def url(self, host: str, port: int) -> str:
        return url(host, port)

    def info_extra(self) -> dict:
        return {"auth_source": AUTH_SOURCE}

    def inventory_section(self, directory: Path, state: SandboxState) -> list[str]:
        """``[mongodb]`` credentials (host mongo1: FerretDB)."""
        return [
            f"# mongo1: {ENGINE} speaking the MongoDB protocol.",
            "# Its TIMINGS ARE FERRETDB'S, NOT MONGODB'S (a Go proxy over SQLite files).",
            "[mongodb]",
            f"port = {state.ports[self.name]}",
            f"username = {q(self.username)}",
            f"password_file = {q(str(self.password_file(directory)))}",
        ]

    def fetch(self, require: bool) -> None:
        """Build FerretDB once (cached) when Go can; without Go say so in one line, or
        fail when ``require`` (CI must test against it)."""
        if ferretdb.available():
            print(f"FerretDB {ferretdb.FERRETDB_VERSION} in {ferretdb.binary_path()}")
            return
        go, why_not = ferretdb.usable_go()
        if go is None:
            if require:
                raise LoadtowerError(
                    f"{why_not} (--require-mongodb / $LOADTOWER_REQUIRE_MONGODB=1)")
            print(f"{why_not}: the sandbox runs without MongoDB")
            return
        print(f"building FerretDB {ferretdb.FERRETDB_VERSION} with {go} (once; cached)...",
              flush=True)
        started = time.monotonic()
        path = ferretdb.build()
        print(f"FerretDB {ferretdb.FERRETDB_VERSION} built in "
              f"{time.monotonic() - started:.0f} s: {path}")


SERVICE = MongodbService()
