"""A load worker's side of the signed link (protocol/link_secrets.py): every message it
sends to the Locust master carries, as a second ZeroMQ frame, its HMAC under the run's
link key (the master drops what does not verify), and it hears only messages the master
signed for it: whatever else reaches its socket (a process that took the master's port)
is dropped unread."""

from __future__ import annotations

import sys
from typing import Any

from loadtower.protocol.link_secrets import mac, to_worker, verify


def sign_client(client: Any, key: bytes, identity: str) -> None:
    """Make the Locust rpc `client` (locust.rpc.zmqrpc.Client) sign what it sends and
    hear only what the master signed for it."""
    import msgpack.exceptions as msgerr  # type: ignore[import-untyped]  # no stubs
    import zmq.error as zmqerr
    import zmq.green as zmq
    from locust.exception import RPCError, RPCReceiveError, RPCSendError
    from locust.rpc.protocol import Message
    from locust.util.exception_handler import retry

    ident = identity.encode()
    heard_from = to_worker(ident)
    dropped = [0]

    @retry()
    def send(msg: Any) -> None:
        payload = msg.serialize()
        try:
            client.socket.send_multipart([payload, mac(key, ident, payload)], zmq.NOBLOCK)
        except zmqerr.ZMQError as exc:
            raise RPCSendError("ZMQ sent failure") from exc

    def recv() -> Any:
        while True:
            try:
                frames = client.socket.recv_multipart()
            except zmqerr.ZMQError as exc:
                raise RPCError("ZMQ network broken") from exc
            if len(frames) == 2 and verify(key, heard_from, frames[0], frames[1]):
                try:
                    return Message.unserialize(frames[0])
                except msgerr.ExtraData as exc:
                    raise RPCReceiveError("ZMQ interrupted message") from exc
            dropped[0] += 1
            if dropped[0] == 1:
                print("loadtower agent worker: dropped a message on the master's link that "
                      "the run's master did not sign", file=sys.stderr, flush=True)

    client.send = send
    client.recv = recv
