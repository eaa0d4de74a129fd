"""MongoDB over TLS, end to end through `loadtower run`: a FerretDB of this module's own
that listens with TLS only (no plain port) and asks clients for a certificate of the
sandbox CA (`--listen-tls-ca-file`), with a user (FerretDB's new auth) as the sandbox
sets up. The inventory names the TLS files in `[mongodb]`; the orchestrator's client
and the agent (PEM contents in the phase spec) both connect with them.

- load + a few seconds of YCSB A at a fixed rate: zero errors, the documents all there;
- a wrong CA file: one line naming the host and the CA, exit 2, before any load;
- a client without TLS is refused.

Uses the session sandbox's sshd and agent host: run under `flock /tmp/lt-integration.lock`.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import tomllib
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from loadtower.agents.tls import TlsHandshakeError, TlsOptions
from loadtower.sandbox import tls_certs
from loadtower.store import StoreReader
from tests.mongodb.ferret import PASSWORD, USER, _free_port, _wait_listening, ferretdb_binary
from tests.orchestrator.run_helpers import only_run, run_scenario

pytestmark = [pytest.mark.integration, pytest.mark.timeout(300)]

RECORDS = 500
RATE = 100
ADDRESS = "127.0.0.1"


@pytest.fixture(scope="module")
def tls_ferret() -> Iterator[dict]:
    """A TLS-only FerretDB (client certificates required): port, TLS files, workdir."""
    binary = ferretdb_binary()
    if binary is None:
        pytest.skip("no FerretDB binary (loadtower sandbox mongodb start builds one)")
    workdir = Path(tempfile.mkdtemp(prefix="lt-test-ferret-tls-"))
    proc = None
    try:
        files = tls_certs.make(workdir, {"mongo1": [ADDRESS]})
        node = files.nodes["mongo1"]
        port = _free_port()
        log = workdir / "ferretdb.log"
        (workdir / "data").mkdir()
        with log.open("wb") as out:
            proc = subprocess.Popen(
                [
                    str(binary), "--handler=sqlite", f"--sqlite-url=file:{workdir}/data/",
                    "--listen-addr=", f"--listen-tls={ADDRESS}:{port}",
                    f"--listen-tls-cert-file={node.cert}", f"--listen-tls-key-file={node.key}",
                    f"--listen-tls-ca-file={files.ca}",
                    "--telemetry=disable", "--debug-addr=-", f"--state-dir={workdir}",
                    "--test-enable-new-auth", "--setup-database=admin",
                    f"--setup-username={USER}", f"--setup-password={PASSWORD}",
                ],
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        _wait_listening(port, proc, log)
        yield {"port": port, "files": files, "dir": workdir}
    finally:
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait(10)
        shutil.rmtree(workdir, ignore_errors=True)


def _q(value: object) -> str:
    return '"' + str(value).replace("\\", "\\\\").replace('"', '\\"') + '"'


def write_inventory(path: Path, sandbox: dict, box: dict, ca: Path) -> Path:
    """The sandbox's ssh and agent host, and mongo1: this module's TLS FerretDB."""
    base = tomllib.loads(Path(sandbox["inventory"]).read_text())
    agent = next(h for h in base["hosts"].values() if "agent" in h["roles"])
    ssh = base["ssh"]
    files = box["files"]
    password = path.parent / "mongodb.password"
    password.write_text(PASSWORD + "\n")
    password.chmod(0o600)
    lines = ["[ssh]"] + [f"{k} = {_q(v) if isinstance(v, str) else v}" for k, v in ssh.items()]
    lines += [
        "", "[mongodb]", f"port = {box['port']}", f"username = {_q(USER)}",
        f"password_file = {_q(password)}", "tls = true", f"tls_ca_file = {_q(ca)}",
        f"tls_cert_file = {_q(files.client_cert)}", f"tls_key_file = {_q(files.client_key)}",
        "", "[hosts.mongo1]", f"address = {_q(ADDRESS)}", f"ssh_host = {_q(ADDRESS)}",
        'roles = ["db"]', 'engine = "mongodb"',
        "", "[hosts.agent1]", f"address = {_q(agent['address'])}", 'roles = ["agent"]',
        f"python = {_q(agent['python'])}", f"processes = {agent.get('processes', 1)}",
    ]
    path.write_text("\n".join(lines) + "\n")
    return path


def scenario(path: Path, database: str) -> Path:
    path.write_text(f"""\
name = "mongo-tls-test"
engine = "mongodb"

[target]
keyspace = "{database}"

[dataset]
records = {RECORDS}
fields = 4
field_size = 50

[workloads.a]
preset = "ycsb-a"
batch_size = 50

[[phases]]
type = "load"
name = "load"
workload = "a"
concurrency = 4

[[phases]]
type = "run"
name = "a"
workload = "a"
duration = "3s"
rate = {RATE}
""")
    return path


def test_load_and_ycsb_a_over_tls_with_zero_errors(
    sandbox: dict, tls_ferret: dict, tmp_path: Path
) -> None:
    database = f"lt_tls_{uuid.uuid4().hex[:10]}"
    inventory = write_inventory(tmp_path / "inventory.toml", sandbox, tls_ferret,
                                tls_ferret["files"].ca)
    store = tmp_path / "runs.duckdb"
    done = run_scenario(scenario(tmp_path / "s.toml", database), inventory, store, timeout=180)
    assert done.returncode == 0, done.stderr[-3000:]
    run = only_run(store)
    assert run["status"] == "completed"
    reader = StoreReader(store)
    ops = {(r["phase"], r["op"]): r for r in reader.phase_summary(run["id"])}
    assert ops[("load", "insert_batch")]["ops"] == RECORDS // 50
    assert {op for (phase, op) in ops if phase == "a"} == {"read", "update"}
    assert all(r["errors"] == 0 for r in ops.values()), ops
    assert sum(ops[("a", op)]["ops"] for op in ("read", "update")) > 0
    events = reader.events(run["id"])
    versions = next(e for e in events if e["kind"] == "versions")  # asked over TLS
    assert "mongo1" in str(versions["data"])
    client_pem = tls_ferret["dir"] / "client.combined.pem"
    files = tls_ferret["files"]
    client_pem.write_bytes(files.client_key.read_bytes() + files.client_cert.read_bytes())
    import pymongo

    with pymongo.MongoClient(
        ADDRESS, tls_ferret["port"], tls=True, tlsCAFile=str(files.ca),
        tlsCertificateKeyFile=str(client_pem), username=USER, password=PASSWORD,
        authSource="admin", serverSelectionTimeoutMS=10_000,
    ) as c:
        assert c[database]["usertable"].count_documents({}) == RECORDS
        c.drop_database(database)


def test_a_wrong_ca_fails_with_one_line_naming_the_host(
    sandbox: dict, tls_ferret: dict, tmp_path: Path
) -> None:
    wrong = tls_certs.make(tmp_path / "other", {"x": [ADDRESS]}).ca
    inventory = write_inventory(tmp_path / "inventory.toml", sandbox, tls_ferret, wrong)
    store = tmp_path / "runs.duckdb"
    done = run_scenario(scenario(tmp_path / "s.toml", "lt_tls_wrong"), inventory, store,
                        timeout=120)
    assert done.returncode == 2, done.stderr[-3000:]
    port = tls_ferret["port"]
    line = (f"mongo1 {ADDRESS}:{port}: TLS handshake failed: certificate verify failed: "
            f"unable to get local issuer certificate (CA {wrong})")
    assert line in done.stderr, done.stderr[-3000:]
    assert only_run(store)["status"] == "failed"
    assert StoreReader(store).phases(only_run(store)["id"]) == []  # no load was sent
    # the agent's session: the same line before pymongo connects
    import asyncio

    from loadtower.engines.mongodb.agent.session import MongoSession

    files = tls_ferret["files"]
    options = TlsOptions(ca_pem=wrong.read_text(), cert_pem=files.client_cert.read_text(),
                         key_pem=files.client_key.read_text(), ca_file=str(wrong))
    session = MongoSession()
    with pytest.raises(TlsHandshakeError) as info:
        asyncio.run(session.connect([ADDRESS], port, USER, PASSWORD, "admin", tls=options,
                                    names={ADDRESS: "mongo1"}))
    assert str(info.value) == line


def test_a_client_without_tls_is_refused(tls_ferret: dict) -> None:
    import pymongo
    from pymongo.errors import ServerSelectionTimeoutError

    with pymongo.MongoClient(ADDRESS, tls_ferret["port"], serverSelectionTimeoutMS=2_000,
                             connectTimeoutMS=2_000, socketTimeoutMS=2_000) as c:
        with pytest.raises(ServerSelectionTimeoutError):
            c.admin.command("ping")
