"""The sandbox's TLS files: a CA, one certificate per node and a client certificate.

``make(directory, nodes)`` writes PEM files into ``DIR/tls/`` (private keys mode 0600,
unencrypted PKCS#8): ``ca.pem`` / ``ca.key``, per node ``NAME.pem`` (its certificate,
SAN = its addresses and its name), ``NAME.key`` and ``NAME.combined.pem`` (key then
certificate, for a server that reads both from one file), and ``client.pem`` /
``client.key``. It is idempotent: files that exist, parse, are signed by the CA, are
valid for at least another day and name the same addresses are kept.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import os
from dataclasses import dataclass, field
from pathlib import Path

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from loadtower.sandbox.inventory_file import client_tls_files

VALID_DAYS = 3650
MIN_LEFT = dt.timedelta(days=1)
CA_NAME = "loadtower sandbox CA"
CLIENT_NAME = "loadtower-client"


@dataclass(frozen=True)
class NodeFiles:
    cert: Path
    key: Path
    combined: Path


@dataclass(frozen=True)
class TlsFiles:
    directory: Path
    ca: Path
    ca_key: Path
    client_cert: Path
    client_key: Path
    nodes: dict[str, NodeFiles] = field(default_factory=dict)


def tls_dir(directory: Path) -> Path:
    return Path(directory) / "tls"


def client_files(directory: Path) -> tuple[Path, Path, Path]:
    """(CA, client certificate, client key) paths of the sandbox in ``directory``."""
    return client_tls_files(Path(directory))


def make(directory: Path | str, nodes: dict[str, list[str]]) -> TlsFiles:
    """The CA, each node's certificate (``nodes``: name -> its addresses) and the client
    certificate under ``directory/tls``; valid existing files are reused."""
    out = tls_dir(Path(directory))
    out.mkdir(parents=True, exist_ok=True)
    os.chmod(out, 0o700)
    ca_path, ca_key_path = out / "ca.pem", out / "ca.key"
    ca_cert, ca_key = _load_ca(ca_path, ca_key_path)
    renewed = ca_cert is None or ca_key is None
    if ca_cert is None or ca_key is None:
        ca_key = ec.generate_private_key(ec.SECP256R1())
        ca_cert = _ca_certificate(ca_key)
        _write_key(ca_key_path, ca_key)
        _write_cert(ca_path, ca_cert)
    files: dict[str, NodeFiles] = {}
    for name, addresses in nodes.items():
        node = NodeFiles(out / f"{name}.pem", out / f"{name}.key", out / f"{name}.combined.pem")
        sans = _sans(name, addresses)
        if renewed or not _leaf_ok(node.cert, node.key, ca_cert, sans, server=True):
            key = ec.generate_private_key(ec.SECP256R1())
            cert = _leaf(name, key, ca_cert, ca_key, sans, server=True)
            _write_key(node.key, key)
            _write_cert(node.cert, cert)
        if renewed or not node.combined.exists() or node.combined.read_bytes() != (
            node.key.read_bytes() + node.cert.read_bytes()
        ):
            _write_private(node.combined, node.key.read_bytes() + node.cert.read_bytes())
        files[name] = node
    client_cert, client_key = out / "client.pem", out / "client.key"
    client_sans = _sans(CLIENT_NAME, [])
    if renewed or not _leaf_ok(client_cert, client_key, ca_cert, client_sans, server=False):
        key = ec.generate_private_key(ec.SECP256R1())
        _write_key(client_key, key)
        _write_cert(client_cert, _leaf(CLIENT_NAME, key, ca_cert, ca_key, client_sans,
                                       server=False))
    return TlsFiles(out, ca_path, ca_key_path, client_cert, client_key, files)


# ---- building ------------------------------------------------------------------------
def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def _name(common: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "loadtower"),
                      x509.NameAttribute(NameOID.COMMON_NAME, common)])


def _ca_certificate(key: ec.EllipticCurvePrivateKey) -> x509.Certificate:
    now = _now()
    return (
        x509.CertificateBuilder()
        .subject_name(_name(CA_NAME))
        .issuer_name(_name(CA_NAME))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=VALID_DAYS))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                          content_commitment=False, key_encipherment=False,
                          data_encipherment=False, key_agreement=False,
                          encipher_only=False, decipher_only=False),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()),
                       critical=False)
        .sign(key, hashes.SHA256())
    )


def _sans(name: str, addresses: list[str]) -> list[x509.GeneralName]:
    out: list[x509.GeneralName] = [x509.DNSName(name)]
    for address in addresses:
        try:
            out.append(x509.IPAddress(ipaddress.ip_address(address)))
        except ValueError:
            out.append(x509.DNSName(address))
    return out


def _leaf(
    name: str,
    key: ec.EllipticCurvePrivateKey,
    ca_cert: x509.Certificate,
    ca_key: ec.EllipticCurvePrivateKey,
    sans: list[x509.GeneralName],
    server: bool,
) -> x509.Certificate:
    now = _now()
    # node certificates serve clients and also dial other nodes (internode TLS)
    usages = [ExtendedKeyUsageOID.CLIENT_AUTH]
    if server:
        usages.insert(0, ExtendedKeyUsageOID.SERVER_AUTH)
    return (
        x509.CertificateBuilder()
        .subject_name(_name(name))
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=VALID_DAYS))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.SubjectAlternativeName(sans), critical=False)
        .add_extension(x509.ExtendedKeyUsage(usages), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()),
            critical=False,
        )
        .sign(ca_key, hashes.SHA256())
    )


# ---- reusing -------------------------------------------------------------------------
def _read_cert(path: Path) -> x509.Certificate | None:
    try:
        return x509.load_pem_x509_certificate(path.read_bytes())
    except (OSError, ValueError):
        return None


def _read_key(path: Path) -> ec.EllipticCurvePrivateKey | None:
    try:
        key = serialization.load_pem_private_key(path.read_bytes(), password=None)
    except (OSError, ValueError, TypeError):
        return None
    return key if isinstance(key, ec.EllipticCurvePrivateKey) else None


def _fresh(cert: x509.Certificate) -> bool:
    return cert.not_valid_after_utc - _now() > MIN_LEFT


def _same_key(cert: x509.Certificate, key: ec.EllipticCurvePrivateKey) -> bool:
    fmt = serialization.PublicFormat.SubjectPublicKeyInfo
    enc = serialization.Encoding.DER
    return cert.public_key().public_bytes(enc, fmt) == key.public_key().public_bytes(enc, fmt)


def _load_ca(
    cert_path: Path, key_path: Path
) -> tuple[x509.Certificate | None, ec.EllipticCurvePrivateKey | None]:
    cert, key = _read_cert(cert_path), _read_key(key_path)
    if cert is None or key is None or not _fresh(cert) or not _same_key(cert, key):
        return None, None
    return cert, key


def _leaf_ok(
    cert_path: Path, key_path: Path, ca: x509.Certificate, sans: list[x509.GeneralName],
    server: bool,
) -> bool:
    cert, key = _read_cert(cert_path), _read_key(key_path)
    if cert is None or key is None or not _fresh(cert) or not _same_key(cert, key):
        return False
    try:
        cert.verify_directly_issued_by(ca)
        have = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        usages = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    except (ValueError, TypeError, InvalidSignature, x509.ExtensionNotFound):
        return False
    wants_server = ExtendedKeyUsageOID.SERVER_AUTH in usages
    return set(have) == set(sans) and wants_server == server


# ---- writing -------------------------------------------------------------------------
def _write_private(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.unlink(missing_ok=True)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
    os.replace(tmp, path)


def _write_key(path: Path, key: ec.EllipticCurvePrivateKey) -> None:
    _write_private(path, key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    ))


def _write_cert(path: Path, cert: x509.Certificate) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)
