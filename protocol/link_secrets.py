"""The load workers' link to the Locust master: its proof and the secrets kept off it.

Every run has a random *link key* (``LINK_KEY_BYTES``). The orchestrator gives it to
the Locust master in its environment (``KEY_ENV``) and to each agent host over SSH, as
the 0600 file ``LINK_KEY_FILE`` in the run's private directory there. A worker signs
every message it sends with ``mac(key, identity, payload)`` (HMAC-SHA256 over its ZMQ
identity and the message's bytes); the master drops, unread, whatever a client sends
without a valid signature: a client that does not hold the key is never registered and
is sent nothing (docs/security.md). The master signs what it sends to a worker the same
way (over ``to_worker(identity)``) and the worker drops what does not verify: a process
that takes the master's port cannot command the workers.

Secrets never cross the link: `split_secrets` takes the database password and the TLS
client key out of a master ``start`` command and puts in their place the NAMES of
files (``password_ref``, ``connection.tls.key_ref``) that the orchestrator writes into
the same private directory over SSH; the agent reads them there (`resolve_secrets`).
"""

from __future__ import annotations

import functools
import hashlib
import hmac
from collections.abc import Callable
from typing import Any

LINK_KEY_BYTES = 32
LINK_KEY_FILE = "link.key"
KEY_ENV = "LOADTOWER_LINK_KEY"  # the master's link key, hex, in its environment
MAC_BYTES = 32
SECRET_PREFIX = "secret-"


def mac(key: bytes, identity: bytes, payload: bytes) -> bytes:
    """The signature of one message `payload` sent by the ZMQ client `identity`."""
    mark = len(identity).to_bytes(4, "big")  # identity|payload cannot be split otherwise
    signer = _keyed(key).copy()  # the key's pads are set up once, the payload not copied
    signer.update(mark)
    signer.update(identity)
    signer.update(payload)
    return signer.digest()


@functools.lru_cache(maxsize=4)
def _keyed(key: bytes) -> hmac.HMAC:
    """HMAC-SHA256 with `key` and nothing signed yet: each message's signer is a copy (a
    process holds its run's one link key; the key was in its memory already)."""
    return hmac.new(key, digestmod=hashlib.sha256)


def verify(key: bytes, identity: bytes, payload: bytes, tag: bytes) -> bool:
    return len(tag) == MAC_BYTES and hmac.compare_digest(mac(key, identity, payload), tag)


def to_worker(identity: bytes) -> bytes:
    """What the master's signatures are made over for the worker `identity`: never the
    same bytes as that worker's own (a worker's message cannot pass for the master's)."""
    return b"master>" + identity


def secret_name(key: bytes, value: str) -> str:
    """The file name a secret is written under: the same value gives the same name for
    one run (it is written once), and the name tells nothing of the value without the
    run's key."""
    digest = hmac.new(key, b"secret-name\0" + value.encode(), hashlib.sha256).hexdigest()
    return SECRET_PREFIX + digest[:24]


def split_secrets(command: dict[str, Any], key: bytes) -> tuple[dict[str, Any], dict[str, str]]:
    """(the command without its secrets, {file name: secret}). The password becomes
    ``password_ref`` (None when there is none); the spec's TLS client key
    ``connection.tls.key_ref``. The command given is not changed."""
    out = dict(command)
    files: dict[str, str] = {}
    password = out.pop("password", None)
    ref = None
    if password is not None:
        ref = secret_name(key, str(password))
        files[ref] = str(password)
    out["password_ref"] = ref
    spec: dict[str, Any] = out.get("spec") or {}
    tls = (spec.get("connection") or {}).get("tls")
    if isinstance(tls, dict) and "key_pem" in tls:
        tls = dict(tls)
        pem = tls.pop("key_pem")
        tls["key_ref"] = None
        if pem:
            tls["key_ref"] = secret_name(key, str(pem))
            files[tls["key_ref"]] = str(pem)
        out["spec"] = {**spec, "connection": {**spec["connection"], "tls": tls}}
    return out, files


def resolve_secrets(message: dict[str, Any], read: Callable[[str], str]) -> dict[str, Any]:
    """The phase message with its secrets read back from their files (``read(name)``):
    ``password`` in place of ``password_ref``, ``key_pem`` in place of ``key_ref``."""
    out = dict(message)
    ref = out.pop("password_ref", None)
    out["password"] = read(str(ref)) if ref else None
    spec: dict[str, Any] = out.get("spec") or {}
    tls = (spec.get("connection") or {}).get("tls")
    if isinstance(tls, dict) and "key_ref" in tls:
        tls = dict(tls)
        key_ref = tls.pop("key_ref")
        tls["key_pem"] = read(str(key_ref)) if key_ref else None
        out["spec"] = {**spec, "connection": {**spec["connection"], "tls": tls}}
    return out


def valid_name(name: str) -> bool:
    """A file name the agent accepts in a ref: ours, never a path."""
    rest = name[len(SECRET_PREFIX):]
    return name.startswith(SECRET_PREFIX) and len(rest) == 24 and all(
        c in "0123456789abcdef" for c in rest)
