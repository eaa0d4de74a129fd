"""The [mongodb] TLS keys (no services): pymongo's TLS arguments from the spec's PEM
contents, the PEM contents in the phase spec, and the run-time check of the files."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from loadtower.agents.tls import TlsOptions
from loadtower.engines.mongodb.agent.tls import client_kwargs
from loadtower.errors import ConfigError
from loadtower.orchestrator.targets import connection_options
from loadtower.orchestrator.tls_files import tls_options
from loadtower.sandbox import tls_certs
from loadtower.scenarios.environment_checks import check_tls_files
from loadtower.scenarios.plan import load_plan
from tests.mongodb.test_mongodb_units import INVENTORY, SCENARIO

TLS = """
tls = true
tls_ca_file = "tls/ca.pem"
tls_cert_file = "tls/client.pem"
tls_key_file = "tls/client.key"
"""


def _inventory(extra: str = TLS) -> str:
    return INVENTORY.replace('password_file = "mongo.pw"\n', 'password_file = "mongo.pw"'
                             + extra, 1)


def test_without_tls_options_only_secure_is_passed() -> None:
    with client_kwargs(None) as kw:
        assert kw == {"tls": False}
    with client_kwargs(None, secure=True) as kw:
        assert kw == {"tls": True}


def test_pem_contents_become_private_files_for_pymongo_while_it_is_built() -> None:
    options = TlsOptions(ca_pem="CA\n", cert_pem="CERT\n", key_pem="KEY\n", verify_hostname=True)
    with client_kwargs(options) as kw:
        ca, combined = Path(kw["tlsCAFile"]), Path(kw["tlsCertificateKeyFile"])
        assert ca.read_text() == "CA\n"
        assert combined.read_text() == "KEY\nCERT\n"
        assert stat.S_IMODE(os.stat(ca).st_mode) == 0o600
        assert stat.S_IMODE(os.stat(combined).st_mode) == 0o600
        assert kw["tls"] is True and kw["tlsAllowInvalidHostnames"] is False
    assert not ca.exists() and not combined.exists()
    no_cert = TlsOptions(ca_pem="CA\n", verify_hostname=False)
    with client_kwargs(no_cert) as kw:
        assert "tlsCertificateKeyFile" not in kw and kw["tlsAllowInvalidHostnames"] is True
    with client_kwargs(options, allow_invalid_hostnames=True) as kw:
        assert kw["tlsAllowInvalidHostnames"] is True


def test_real_certificates_build_a_pymongo_client_after_the_files_are_gone(
    tmp_path: Path,
) -> None:
    import pymongo

    files = tls_certs.make(tmp_path, {"mongo1": ["127.0.0.1"]})
    options = TlsOptions(ca_pem=files.ca.read_text(), cert_pem=files.client_cert.read_text(),
                         key_pem=files.client_key.read_text())
    with client_kwargs(options) as kw:
        client = pymongo.MongoClient("127.0.0.1", 1, connect=False, **kw)
    try:  # the SSL context was made while the files existed
        assert client.options.pool_options._ssl_context is not None
    finally:
        client.close()


def test_mongodb_tls_keys_reach_the_phase_spec_as_pem_contents(write, tmp_path: Path) -> None:  # noqa: ANN001
    files = tls_certs.make(tmp_path, {"mongo1": ["127.0.0.1"]})
    plan = load_plan(write("s.toml", SCENARIO), write("inv.toml", _inventory()))
    check_tls_files(plan)
    options = tls_options(plan, "mongodb")
    assert options is not None
    assert options.ca_pem == files.ca.read_text()
    assert options.cert_pem == files.client_cert.read_text()
    assert options.ca_file == str(tmp_path / "tls" / "ca.pem")
    spec = connection_options(plan, "mongodb", ["mongo1"])
    assert spec["tls"]["ca_pem"] == files.ca.read_text()
    assert spec["tls"]["key_pem"] == files.client_key.read_text()
    assert spec["names"] == {"127.0.0.1": "mongo1"}
    assert TlsOptions.from_spec(spec["tls"]) == options
    plain = load_plan(write("s.toml", SCENARIO), write("inv.toml", INVENTORY))
    assert tls_options(plain, "mongodb") is None
    assert "tls" not in connection_options(plain, "mongodb", ["mongo1"])


def test_a_missing_mongodb_tls_file_is_one_line(write, tmp_path: Path) -> None:  # noqa: ANN001
    inv = write("inv.toml", _inventory())
    plan = load_plan(write("s.toml", SCENARIO), inv)
    with pytest.raises(ConfigError) as info:
        check_tls_files(plan)
    line = INVENTORY.splitlines().index('password_file = "mongo.pw"') + 3
    assert str(info.value) == (f"{inv}:{line}: key 'mongodb.tls_ca_file': "
                               f"file {tmp_path}/tls/ca.pem does not exist")
