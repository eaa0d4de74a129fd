"""The link's proof (an HMAC per message) and the secrets taken out of a start command."""

from __future__ import annotations

import json

from loadtower.protocol.link_secrets import (
    mac,
    resolve_secrets,
    secret_name,
    split_secrets,
    valid_name,
    verify,
)

KEY = bytes(range(32))
PASSWORD = "pw-Secret-42"
KEY_PEM = "-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----\n"


def _start() -> dict:
    return {"cmd": "start", "phase": "run", "password": PASSWORD, "username": "bench",
            "spec": {"engine": "cassandra", "connection": {"tls": {
                "ca_pem": "CA", "cert_pem": "CERT", "key_pem": KEY_PEM,
                "verify_hostname": True}}}}


def test_a_signature_verifies_only_for_its_key_identity_and_payload() -> None:
    tag = mac(KEY, b"host_1", b"payload")
    assert verify(KEY, b"host_1", b"payload", tag)
    assert not verify(bytes(32), b"host_1", b"payload", tag)  # another run's key
    assert not verify(KEY, b"impostor", b"payload", tag)  # another client's identity
    assert not verify(KEY, b"host_1", b"payload!", tag)  # another message
    assert not verify(KEY, b"host_1", b"payload", tag[:-1])  # cut short
    assert not verify(KEY, b"host_1", b"payload", b"")  # no proof at all


def test_identity_and_payload_cannot_be_shifted_into_each_other() -> None:
    assert mac(KEY, b"ab", b"c") != mac(KEY, b"a", b"bc")


def test_split_takes_every_secret_out_and_resolve_puts_it_back() -> None:
    command = _start()
    out, files = split_secrets(command, KEY)
    wire = json.dumps(out)
    assert PASSWORD not in wire and "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC" not in wire
    assert "password" not in out and "key_pem" not in out["spec"]["connection"]["tls"]
    assert out["spec"]["connection"]["tls"]["cert_pem"] == "CERT"  # public parts stay
    assert set(files.values()) == {PASSWORD, KEY_PEM}
    assert all(valid_name(name) for name in files)
    assert command["password"] == PASSWORD  # the caller's command is not changed
    back = resolve_secrets(out, files.__getitem__)
    assert back["password"] == PASSWORD
    assert back["spec"]["connection"]["tls"]["key_pem"] == KEY_PEM


def test_no_password_and_no_tls_need_no_file() -> None:
    out, files = split_secrets({"cmd": "start", "spec": {"engine": "cassandra"}}, KEY)
    assert files == {} and out["password_ref"] is None
    assert resolve_secrets(out, lambda name: "never read")["password"] is None


def test_secret_names_are_per_run_and_never_paths() -> None:
    assert secret_name(KEY, PASSWORD) == secret_name(KEY, PASSWORD)
    assert secret_name(KEY, PASSWORD) != secret_name(bytes(32), PASSWORD)
    assert PASSWORD not in secret_name(KEY, PASSWORD)
    for bad in ("../link.key", "secret-" + "0" * 23 + "/", "/etc/shadow", "secret-", "link.key"):
        assert not valid_name(bad)
