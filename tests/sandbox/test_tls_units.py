"""The sandbox's TLS files and the node config that uses them (no services)."""

from __future__ import annotations

import ssl
import stat
from pathlib import Path

import pytest
from cryptography import x509

from loadtower.engines.cassandra.sandbox.node import NodeSpec, NodeTls
from loadtower.errors import LoadtowerError
from loadtower.sandbox import tls_certs
from loadtower.sandbox.inventory_file import render
from loadtower.sandbox.state import NodeState, SandboxState


def _sans(path: Path) -> tuple[set[str], set[str]]:
    cert = x509.load_pem_x509_certificate(path.read_bytes())
    san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    ips = {str(a) for a in san.get_values_for_type(x509.IPAddress)}
    return ips, set(san.get_values_for_type(x509.DNSName))


def test_certificates_name_their_nodes_keys_are_private_and_chain_to_the_ca(
    tmp_path: Path,
) -> None:
    files = tls_certs.make(tmp_path, {"db1": ["198.18.0.11"], "db2": ["198.18.0.12"]})
    assert files.directory == tmp_path / "tls"
    assert _sans(files.nodes["db1"].cert) == ({"198.18.0.11"}, {"db1"})
    assert _sans(files.nodes["db2"].cert) == ({"198.18.0.12"}, {"db2"})
    for key in (files.ca_key, files.client_key, files.nodes["db1"].key,
                files.nodes["db1"].combined):
        assert stat.S_IMODE(key.stat().st_mode) == 0o600, key
    combined = files.nodes["db1"].combined.read_text()
    assert combined.startswith("-----BEGIN PRIVATE KEY-----") and "CERTIFICATE" in combined
    ca = x509.load_pem_x509_certificate(files.ca.read_bytes())
    for leaf in (files.nodes["db1"].cert, files.client_cert):
        x509.load_pem_x509_certificate(leaf.read_bytes()).verify_directly_issued_by(ca)
    # what a client does with them: a context that trusts the CA and presents the client cert
    context = ssl.create_default_context(cafile=str(files.ca))
    context.load_cert_chain(str(files.client_cert), str(files.client_key))


def test_make_reuses_valid_files_and_renews_what_changed(tmp_path: Path) -> None:
    first = tls_certs.make(tmp_path, {"db1": ["127.0.0.21"]})
    before = {p: p.read_bytes() for p in (first.ca, first.client_cert, first.nodes["db1"].cert)}
    again = tls_certs.make(tmp_path, {"db1": ["127.0.0.21"]})
    assert {p: p.read_bytes() for p in before} == before
    # another address for db1: its certificate is made again; the CA stays
    moved = tls_certs.make(tmp_path, {"db1": ["127.0.0.22"]})
    assert moved.ca.read_bytes() == before[first.ca]
    assert _sans(moved.nodes["db1"].cert)[0] == {"127.0.0.22"}
    # a damaged key: made again, and the combined PEM follows it
    again.nodes["db1"].key.write_text("garbage")
    fixed = tls_certs.make(tmp_path, {"db1": ["127.0.0.22"]})
    assert fixed.nodes["db1"].key.read_text().startswith("-----BEGIN PRIVATE KEY-----")
    assert fixed.nodes["db1"].combined.read_bytes() == (
        fixed.nodes["db1"].key.read_bytes() + fixed.nodes["db1"].cert.read_bytes()
    )
    # a new CA (its key lost): every certificate is signed again by it
    fixed.ca_key.unlink()
    renewed = tls_certs.make(tmp_path, {"db1": ["127.0.0.22"]})
    ca = x509.load_pem_x509_certificate(renewed.ca.read_bytes())
    assert renewed.ca.read_bytes() != before[first.ca]
    for leaf in (renewed.nodes["db1"].cert, renewed.client_cert):
        x509.load_pem_x509_certificate(leaf.read_bytes()).verify_directly_issued_by(ca)


def _spec(tmp_path: Path, **kw: object) -> NodeSpec:
    return NodeSpec(index=1, address="127.0.0.21", home=tmp_path / "node1", seed="127.0.0.21",
                    storage_port=7000, native_port=9042, jmx_port=7199, **kw)  # type: ignore[arg-type]


def test_node_without_dc_or_tls_is_rendered_as_before(tmp_path: Path) -> None:
    spec = _spec(tmp_path)
    spec.write_config()
    yaml = (tmp_path / "node1" / "conf" / "cassandra.yaml").read_text()
    assert "endpoint_snitch: SimpleSnitch" in yaml
    assert "encryption_options" not in yaml
    assert not (tmp_path / "node1" / "conf" / "cassandra-rackdc.properties").exists()


def test_node_with_dc_rack_and_tls(tmp_path: Path) -> None:
    files = tls_certs.make(tmp_path, {"db1": ["127.0.0.21"]})
    tls = NodeTls(ca=files.ca, combined=files.nodes["db1"].combined, internode="dc")
    spec = _spec(tmp_path, dc="dc2", rack="r1", tls=tls)
    spec.write_config()
    conf = tmp_path / "node1" / "conf"
    yaml = (conf / "cassandra.yaml").read_text()
    assert "endpoint_snitch: GossipingPropertyFileSnitch" in yaml
    assert (conf / "cassandra-rackdc.properties").read_text() == "dc=dc2\nrack=r1\n"
    client = yaml.split("client_encryption_options:")[1].split("server_encryption_options:")[0]
    server = yaml.split("server_encryption_options:")[1]
    assert "  enabled: true\n  optional: false\n" in client
    assert "PEMBasedSslContextFactory" in client and "PEMBasedSslContextFactory" in server
    assert f"keystore: {files.nodes['db1'].combined}\n" in client
    assert f"truststore: {files.ca}\n" in client
    assert "internode_encryption: dc\n" in server
    assert f"outbound_keystore: {files.nodes['db1'].combined}\n" in server
    # the same node without dc/rack again: back to SimpleSnitch, no stale properties file
    _spec(tmp_path).write_config()
    assert not (conf / "cassandra-rackdc.properties").exists()


def test_internode_encryption_value_is_checked(tmp_path: Path) -> None:
    with pytest.raises(LoadtowerError, match="internode encryption 'some'"):
        NodeTls(ca=tmp_path / "ca.pem", combined=tmp_path / "x.pem", internode="some")


def test_tls_sandbox_inventory_carries_the_tls_keys(tmp_path: Path) -> None:
    state = SandboxState(
        nodes={1: NodeState(1, "127.0.0.21", 7199)},
        ports={"native": 9042, "ssh": 2222, "prometheus": 9090, "node_exporter": 9100},
        ssh={"user": "root", "key": "/k", "known_hosts": "/kh"},
        tls=True,
    )
    text = render(tmp_path, state)
    ca, cert, key = tls_certs.client_files(tmp_path)
    for line in ("tls = true", f'tls_ca_file = "{ca}"', f'tls_cert_file = "{cert}"',
                 f'tls_key_file = "{key}"', "tls_verify_hostname = true"):
        assert line in text
    state.tls = False
    assert "tls_ca_file" not in render(tmp_path, state)
