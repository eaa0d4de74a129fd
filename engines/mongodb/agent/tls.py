"""TLS options for pymongo from the phase spec's ``connection.tls`` (agents/tls.py
``TlsOptions``: the PEM contents; a load host cannot read the orchestrator's files).

pymongo reads the CA and the client certificate only from files, and only while the
client is built (its SSL context is made then): ``client_kwargs`` writes them to private
(0600) temporary files that are removed as soon as the client exists. ``secure = true``
alone (TLS, the system's CAs) stays as it was.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from loadtower.agents.tls import TlsOptions, combined_pem, private_files


@contextlib.contextmanager
def client_kwargs(options: TlsOptions | None, secure: bool = False,
                  allow_invalid_hostnames: bool = False) -> Iterator[dict[str, Any]]:
    """pymongo's TLS keyword arguments, valid inside the ``with`` (build the client there).
    ``allow_invalid_hostnames``: the caller checked the node's name itself (a client that
    goes through an SSH forward sees 127.0.0.1, not the address the certificate names)."""
    if options is None:
        yield {"tls": secure}
        return
    texts = [options.ca_pem]
    if options.cert_pem and options.key_pem:
        texts.append(combined_pem(options.cert_pem, options.key_pem))
    with private_files(*texts) as paths:
        kwargs: dict[str, Any] = {
            "tls": True,
            "tlsCAFile": paths[0],
            "tlsAllowInvalidHostnames": allow_invalid_hostnames or not options.verify_hostname,
        }
        if len(paths) > 1:
            kwargs["tlsCertificateKeyFile"] = paths[1]
        yield kwargs
