"""TLS for the engines' client paths (those whose kind reads TLS files): one set of
options, one way to say a handshake failed.

The orchestrator sends the PEM contents in the phase spec (``connection.tls``,
protocol/phase_spec.py ``TlsSpec``): a load host cannot read the orchestrator's files.
A driver that wants an ``ssl.SSLContext`` gets ``context()`` (the client certificate is
loaded from a 0600 temporary file that is removed once read); one that takes the PEM
strings reads them here, one that reads only files gets ``private_files``. ``probe``
makes one TLS handshake with Python's ssl so that a wrong CA gives one line naming the
host, whatever driver then connects:
``db1 198.18.0.11:9042: TLS handshake failed: certificate verify failed: ... (CA /path)``.
"""

from __future__ import annotations

import contextlib
import os
import socket
import ssl
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from loadtower.errors import LoadtowerError

PROBE_TIMEOUT_S = 10.0


class TlsHandshakeError(LoadtowerError):
    """A node's TLS handshake failed; the message names the node, why and the CA file."""


@dataclass(frozen=True)
class TlsOptions:
    ca_pem: str
    cert_pem: str | None = None
    key_pem: str | None = None
    verify_hostname: bool = True
    ca_file: str = ""  # where the CA came from (the orchestrator's path), for messages

    @classmethod
    def from_spec(cls, spec: Any) -> TlsOptions | None:
        """From the phase spec's ``connection.tls`` (None or {}: no TLS)."""
        if not spec:
            return None
        return cls(
            ca_pem=str(spec["ca_pem"]),
            cert_pem=spec.get("cert_pem"),
            key_pem=spec.get("key_pem"),
            verify_hostname=bool(spec.get("verify_hostname", True)),
            ca_file=str(spec.get("ca_file") or ""),
        )

    def context(self) -> ssl.SSLContext:
        """A client context: TLS 1.2+, the CA trusted, the client certificate presented."""
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        context.minimum_version = ssl.TLSVersion.TLSv1_2
        context.load_verify_locations(cadata=self.ca_pem)
        context.check_hostname = self.verify_hostname
        context.verify_mode = ssl.CERT_REQUIRED
        if self.cert_pem and self.key_pem:
            load_cert_chain(context, self.cert_pem, self.key_pem)
        return context

    def key(self) -> tuple:
        """What tells two sets of options apart in a session key (no key material)."""
        return (hash((self.ca_pem, self.cert_pem, self.key_pem)), self.verify_hostname)


def load_cert_chain(context: ssl.SSLContext, cert_pem: str, key_pem: str) -> None:
    """ssl reads a certificate chain only from a file: a private (0600) temporary file,
    removed as soon as it is read."""
    with private_files(combined_pem(cert_pem, key_pem)) as (path,):
        context.load_cert_chain(path)


@contextlib.contextmanager
def private_files(*texts: str) -> Iterator[list[str]]:
    """Paths of private (0600) temporary files holding ``texts``, removed on exit: for a
    client (ssl, some drivers) that reads a CA or a certificate and key only from files."""
    paths: list[str] = []
    try:
        for text in texts:
            fd, path = tempfile.mkstemp(prefix="loadtower-tls-", suffix=".pem")
            paths.append(path)
            os.fchmod(fd, 0o600)
            with os.fdopen(fd, "w") as handle:
                handle.write(text)
        yield paths
    finally:
        for path in paths:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(path)


def combined_pem(cert_pem: str, key_pem: str) -> str:
    """A client certificate and its key in one PEM (for a client that reads both from one
    file)."""
    return key_pem.rstrip("\n") + "\n" + cert_pem


def reason(exc: BaseException) -> str:
    """Why a handshake failed, in a few words."""
    if isinstance(exc, ssl.SSLCertVerificationError):
        detail = exc.verify_message or ""
        return f"certificate verify failed: {detail}" if detail else "certificate verify failed"
    if isinstance(exc, ssl.SSLError):
        return (exc.reason or str(exc)).replace("_", " ").lower()
    return str(exc) or type(exc).__name__


def failure_line(label: str, where: str, exc: BaseException, ca_file: str) -> str:
    name = f"{label} {where}" if label and label != where.rsplit(":", 1)[0] else where
    ca = f" (CA {ca_file})" if ca_file else ""
    return f"{name}: TLS handshake failed: {reason(exc)}{ca}"


def wrap(sock: socket.socket, options: TlsOptions, server_name: str, label: str,
         where: str, context: ssl.SSLContext | None = None) -> ssl.SSLSocket:
    """``sock`` after a TLS handshake with the node ``server_name`` (its address as
    certified, also when ``sock`` goes through a forward); TlsHandshakeError if it fails."""
    try:
        return (context or options.context()).wrap_socket(sock, server_hostname=server_name)
    except (ssl.SSLError, ssl.CertificateError, ConnectionResetError) as exc:
        sock.close()
        raise TlsHandshakeError(failure_line(label, where, exc, options.ca_file)) from None


def split_point(point: str, port: int) -> tuple[str, int]:
    """``address``, ``address:port`` or ``[v6]:port`` -> (address, port)."""
    if point.startswith("["):
        address, _, rest = point[1:].partition("]")
        return address, int(rest[1:]) if rest.startswith(":") else port
    if point.count(":") == 1:
        address, _, p = point.partition(":")
        return address, int(p)
    return point, port


def probe(points: list[str], port: int, options: TlsOptions, names: dict[str, str] | None,
          timeout: float = PROBE_TIMEOUT_S) -> None:
    """One handshake with each contact point; TlsHandshakeError naming the first node
    whose handshake fails. A node that cannot be reached at all is the driver's business
    (a down node during a fault phase): it is skipped here."""
    context = options.context()
    for point in points:
        address, node_port = split_point(point, port)
        where = f"{address}:{node_port}"
        label = (names or {}).get(address, address)
        try:
            sock = socket.create_connection((address, node_port), timeout=timeout)
        except OSError:
            continue
        sock.settimeout(timeout)
        try:
            wrap(sock, options, address, label, where, context).close()
        except TlsHandshakeError:
            raise
        except OSError:
            sock.close()  # a timeout or reset during the handshake: the driver will say
