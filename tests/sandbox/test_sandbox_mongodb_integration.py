"""The sandbox's MongoDB host for real: pymongo against the session sandbox's FerretDB.

Run under `flock /tmp/lt-integration.lock` (the shared loopback sandbox)."""

from __future__ import annotations

import stat
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from loadtower.engines.mongodb.sandbox.service import SERVICE as mongo
from loadtower.scenarios.loader import load_inventory
from tests.conftest import run_cli

pytestmark = pytest.mark.integration

TIMEOUT_MS = 10_000


def client(info: dict, password: str | None = None, **options: object):  # noqa: ANN201
    import pymongo

    return pymongo.MongoClient(
        info["url"],
        username=info["username"],
        password=info["password"] if password is None else password,
        serverSelectionTimeoutMS=TIMEOUT_MS,
        connectTimeoutMS=TIMEOUT_MS,
        socketTimeoutMS=TIMEOUT_MS,
        **options,
    )


@pytest.fixture
def database(mongodb: dict) -> Iterator[str]:
    """A database of this test's own, dropped afterwards."""
    name = f"lt_test_{uuid.uuid4().hex[:10]}"
    try:
        yield name
    finally:
        with client(mongodb) as c:
            c.drop_database(name)


def test_the_sandbox_describes_its_ferretdb(sandbox: dict, mongodb: dict) -> None:
    assert mongodb["up"] and mongodb["host"] == "mongo1"
    assert mongodb["engine"] == "FerretDB v1.24.2 (SQLite backend)"
    assert "FerretDB" in mongodb["warning"] and "NOT MongoDB's" in mongodb["warning"]
    assert mongodb["url"] == f"mongodb://{mongodb['address']}:{mongodb['port']}/?authSource=admin"
    assert mongodb["password"] not in mongodb["url"]
    pwd_file = Path(mongodb["password_file"])
    assert stat.S_IMODE(pwd_file.stat().st_mode) == 0o600
    assert pwd_file.read_text().strip() == mongodb["password"]
    inventory, _ = load_inventory(Path(sandbox["inventory"]))
    assert inventory.hosts["mongo1"].engine == "mongodb"
    assert inventory.db_port("mongo1", "mongodb") == mongodb["port"]
    status = run_cli(["sandbox", "status", "--dir", sandbox["dir"]], timeout=60)
    assert status.returncode == 0, status.stdout + status.stderr
    assert f"mongodb        mongo1  {mongodb['url']}  up" in status.stdout
    assert f"WARNING: {mongo.warning}." in status.stdout


def test_the_right_password_inserts_and_counts(mongodb: dict, database: str) -> None:
    with client(mongodb) as c:
        assert c.server_info()["version"].startswith("7.")  # what FerretDB reports
        docs = c[database]["usertable"]
        docs.insert_many([{"_id": f"user{i:04d}", "field0": "x" * 100} for i in range(500)])
        assert docs.count_documents({}) == 500
        assert docs.count_documents({"_id": {"$gte": "user0400"}}) == 100


def test_a_wrong_password_is_refused(mongodb: dict) -> None:
    from pymongo.errors import OperationFailure

    with client(mongodb, password="not-" + mongodb["password"]) as c:
        with pytest.raises(OperationFailure) as info:
            c.admin.command("ping")
    assert info.value.code == 18 and str(info.value).startswith("Authentication failed.")
    import pymongo

    with pymongo.MongoClient(mongodb["url"], serverSelectionTimeoutMS=TIMEOUT_MS) as anonymous:
        with pytest.raises(OperationFailure) as info:
            anonymous["any"]["thing"].count_documents({})
    assert info.value.code == 13  # Unauthorized: no login, no data


def test_kill_then_start_keeps_the_data(sandbox: dict, mongodb: dict, database: str) -> None:
    with client(mongodb) as c:
        c[database]["t"].insert_many([{"n": i} for i in range(50)])
    where = ["--dir", sandbox["dir"]]
    try:
        kill = run_cli(["sandbox", "mongodb", "kill", *where], timeout=60)
        assert kill.returncode == 0, kill.stderr
        assert kill.stdout.strip().endswith(": stopped")
        status = run_cli(["sandbox", "mongodb", "status", *where], timeout=60)
        assert status.returncode == 3 and status.stdout.strip().endswith(": stopped")
        assert not mongo.ping(mongodb["address"], mongodb["port"], timeout=1.0)
    finally:
        start = run_cli(["sandbox", "mongodb", "start", *where], timeout=120)
    assert start.returncode == 0, start.stderr
    assert ": up (pid " in start.stdout
    with client(mongodb) as c:  # the same password: the user was kept with the data
        assert c[database]["t"].count_documents({}) == 50
    restart = run_cli(["sandbox", "mongodb", "restart", *where], timeout=120)
    assert restart.returncode == 0 and ": up (pid " in restart.stdout, restart.stderr
