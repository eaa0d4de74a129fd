"""The sandbox's secrets and its client side of TLS.

A login's password is generated once and kept in DIR/secrets/NAME.password (mode 0600):
the ring engine's (sandbox/ring_engine.py) and each engine host's
(sandbox/engine_services.py). `ClientTls` is what a client of a node with TLS presents:
the CA to trust and the client certificate (sandbox/tls_certs.py makes them).
"""

from __future__ import annotations

import os
import secrets
import ssl
from dataclasses import dataclass
from pathlib import Path


def secret(path: Path) -> str:
    """The random password kept in ``path`` (mode 0600), generated the first time."""
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        os.chmod(path.parent, 0o700)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as handle:
            handle.write(secrets.token_urlsafe(18) + "\n")
    return path.read_text().strip()


@dataclass(frozen=True)
class ClientTls:
    """The sandbox's client side of TLS: the CA to trust and the client certificate."""

    ca: Path
    cert: Path
    key: Path

    def context(self, verify_hostname: bool = True) -> ssl.SSLContext:
        context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH, cafile=str(self.ca))
        context.check_hostname = verify_hostname
        context.load_cert_chain(str(self.cert), str(self.key))
        return context
