"""The CQL TLS inventory keys, the target's local_dc / replication, and what the
orchestrator puts in the phase spec for the agents (no services)."""

from __future__ import annotations

import ssl
from pathlib import Path

import pytest

from loadtower.agents.tls import TlsOptions, failure_line, split_point
from loadtower.cli import main
from loadtower.errors import ConfigError
from loadtower.orchestrator.targets import connection
from loadtower.orchestrator.tls_files import tls_options
from loadtower.sandbox import tls_certs
from loadtower.scenarios.environment_checks import check_tls_files, environment_warnings
from loadtower.scenarios.loader import load_inventory, load_scenario_text
from loadtower.scenarios.plan import load_plan
from tests.scenarios import builtin_render as render

from .conftest import INVENTORY, SCENARIO

TLS = """
tls = true
tls_ca_file = "tls/ca.pem"
tls_cert_file = "tls/client.pem"
tls_key_file = "tls/client.key"
"""


def _with_tls(extra: str = TLS) -> str:
    return INVENTORY.replace('password_env = "LT_PW"\n', 'password_env = "LT_PW"' + extra, 1)


def _error(write, text: str) -> str:
    path = write("inv.toml", text)
    with pytest.raises(ConfigError) as info:
        load_inventory(path)
    return str(info.value).replace(str(path.parent) + "/", "")


def test_missing_tls_file_is_a_check_warning_and_refused_by_run(write, tmp_path: Path,
                                                                 monkeypatch, capsys) -> None:
    monkeypatch.setenv("LT_PW", "pw")
    inv = write("inv.toml", _with_tls())
    plan = load_plan(write("sc.toml", SCENARIO), inv)
    missing = f"file {tmp_path}/tls/ca.pem does not exist"
    assert f"{inv}:13: key 'cassandra.tls_ca_file': {missing}" in environment_warnings(plan)
    with pytest.raises(ConfigError) as info:
        check_tls_files(plan)
    assert str(info.value) == f"{inv}:13: key 'cassandra.tls_ca_file': {missing}"
    # the CLI: one line, exit 2, before anything starts
    assert main(["run", str(tmp_path / "sc.toml"), "--inventory", str(inv), "--headless",
                 "--store", str(tmp_path / "s.duckdb")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith(f"{inv}:13: key 'cassandra.tls_ca_file': {missing}")
    assert len(err.splitlines()) == 1
    assert not (tmp_path / "s.duckdb").exists()
    tls_certs.make(tmp_path, {"db1": ["127.0.0.1"]})
    (tmp_path / "tls" / "client.key").unlink()
    with pytest.raises(ConfigError, match="inv.toml:15: key 'cassandra.tls_key_file': file "):
        check_tls_files(load_plan(tmp_path / "sc.toml", inv))


def test_tls_keys_that_contradict_each_other(write) -> None:
    no_ca = _error(write, _with_tls("\ntls = true\n"))
    assert no_ca.startswith("inv.toml:") and "tls = true needs tls_ca_file" in no_ca
    off = _error(write, _with_tls('\ntls_ca_file = "ca.pem"\n'))
    assert "tls_ca_file is set but tls is not: add tls = true" in off
    half = _error(write, _with_tls('\ntls = true\ntls_ca_file = "a"\ntls_cert_file = "c"\n'))
    assert "tls_cert_file needs tls_key_file too" in half


def _plan(write, tmp_path: Path, scenario: str = SCENARIO):  # noqa: ANN202
    tls_certs.make(tmp_path, {"db1": ["127.0.0.1"], "db2": ["127.0.0.2"]})
    inv = write("inv.toml", _with_tls())
    sc = write("sc.toml", scenario)
    return load_plan(sc, inv)


def test_phase_spec_carries_pem_contents_and_node_names(write, tmp_path: Path,
                                                          monkeypatch) -> None:
    monkeypatch.setenv("LT_PW", "secret-pw")
    plan = _plan(write, tmp_path)
    out = connection(plan, {"engine": "cassandra", "target": {"consistency": "ONE"}})
    tls = out["spec"]["connection"]["tls"]
    assert tls["ca_pem"] == (tmp_path / "tls" / "ca.pem").read_text()
    assert tls["cert_pem"] == (tmp_path / "tls" / "client.pem").read_text()
    assert tls["key_pem"] == (tmp_path / "tls" / "client.key").read_text()
    assert tls["verify_hostname"] is True and tls["ca_file"] == str(tmp_path / "tls" / "ca.pem")
    assert out["spec"]["connection"]["names"] == {"127.0.0.1": "db1"}  # db2 is a standby
    # what an agent makes of it: a context that verifies the node and presents the cert
    options = TlsOptions.from_spec(tls)
    assert options is not None
    context = options.context()
    assert context.check_hostname and context.verify_mode == ssl.CERT_REQUIRED
    assert not list(Path("/tmp").glob("loadtower-tls-*"))  # the key's temp file is gone


def test_no_tls_means_no_tls_in_the_spec(write, monkeypatch) -> None:
    monkeypatch.setenv("LT_PW", "secret-pw")
    plan = load_plan(write("sc.toml", SCENARIO), write("inv.toml", INVENTORY))
    assert tls_options(plan, "cassandra") is None
    out = connection(plan, {"engine": "cassandra", "target": {}})
    assert out["spec"]["connection"] == {"secure": False}


def test_local_dc_and_per_dc_replication(write) -> None:
    text = SCENARIO.replace('engine = "cassandra"\n', 'engine = "cassandra"\n\n[target]\n'
                            'local_dc = "dc1"\nreplication = {dc1 = 2, dc2 = 1}\n', 1)
    scenario = load_scenario_text(text, "sc.toml")
    assert scenario.target.local_dc == "dc1"
    assert scenario.target.replication == {"dc1": 2, "dc2": 1}
    assert render.cql("ycsb", "ks", "t", {"dc1": 2, "dc2": 1})[0][0] == (
        "CREATE KEYSPACE IF NOT EXISTS ks WITH replication = "
        "{'class': 'NetworkTopologyStrategy', 'dc1': 2, 'dc2': 1}"
    )
    assert "'SimpleStrategy', 'replication_factor': 3}" in render.cql("ycsb", "ks", "t", 3)[0][0]
    both = text.replace("local_dc", "replication_factor = 2\nlocal_dc", 1)
    with pytest.raises(ConfigError, match="either replication_factor .* or replication"):
        load_scenario_text(both, "sc.toml")
    bad = text.replace("dc2 = 1", "\"dc'2\" = 1")
    with pytest.raises(ConfigError, match="data centre name"):
        load_scenario_text(bad, "sc.toml")


def test_handshake_failure_line_names_host_address_and_ca() -> None:
    exc = ssl.SSLCertVerificationError(1, "x")
    exc.verify_message = "self-signed certificate in certificate chain"
    assert failure_line("db1", "198.18.0.11:9042", exc, "/tmp/other-ca.pem") == (
        "db1 198.18.0.11:9042: TLS handshake failed: certificate verify failed: "
        "self-signed certificate in certificate chain (CA /tmp/other-ca.pem)"
    )
    # no inventory name known: the address alone
    assert failure_line("198.18.0.11", "198.18.0.11:9042", exc, "").startswith(
        "198.18.0.11:9042: TLS handshake failed"
    )
    assert split_point("127.0.0.2:9043", 9042) == ("127.0.0.2", 9043)
    assert split_point("127.0.0.2", 9042) == ("127.0.0.2", 9042)
    assert split_point("[::1]:9043", 9042) == ("::1", 9043)


def test_check_prints_each_cql_targets_load_path(write, tmp_path: Path, monkeypatch,
                                                 capsys) -> None:
    """`check` says which sender, TLS and local DC the run's agents are asked for."""
    monkeypatch.setenv("LT_PW", "pw")
    tls_certs.make(tmp_path / "tls", {"db1": ["127.0.0.1"]})
    inv = write("inv.toml", _with_tls())
    plain = write("sc.toml", SCENARIO)
    assert main(["check", str(plain), "--inventory", str(inv)]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "load path, cassandra:" in out and "TLS on; no local DC (nodes of every DC)" in out
    dc = write("dc.toml", SCENARIO + '\n[target]\nlocal_dc = "dc1"\n')
    assert main(["check", str(dc), "--inventory", str(write("plain.toml", INVENTORY))]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "TLS off; local DC dc1" in out
    assert "load path, cassandra: Rust core on scylla-rust-driver" in out
    python = write("py.toml", SCENARIO + '\n[target]\nnative_io = "python"\n')
    assert main(["check", str(python), "--inventory", str(write("p2.toml", INVENTORY))]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "load path, cassandra: Python lanes over the session driver (auto); TLS off" in out
