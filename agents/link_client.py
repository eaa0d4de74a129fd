"""A load worker's side of the signed link: every message it sends to the Locust master
carries, as a second ZeroMQ frame, its HMAC under the run's link key
(protocol/link_secrets.py; the master drops what does not verify)."""

from __future__ import annotations

from typing import Any

from loadtower.protocol.link_secrets import mac


def sign_client(client: Any, key: bytes, identity: str) -> None:
    """Make the Locust rpc `client` (locust.rpc.zmqrpc.Client) sign what it sends."""
    import zmq.error as zmqerr
    import zmq.green as zmq
    from locust.exception import RPCSendError
    from locust.util.exception_handler import retry

    ident = identity.encode()

    @retry()
    def send(msg: Any) -> None:
        payload = msg.serialize()
        try:
            client.socket.send_multipart([payload, mac(key, ident, payload)], zmq.NOBLOCK)
        except zmqerr.ZMQError as exc:
            raise RPCSendError("ZMQ sent failure") from exc

    client.send = send
