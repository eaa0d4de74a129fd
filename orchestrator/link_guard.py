"""The Locust master's side of the signed link: only the run's workers are heard.

Every message a worker sends carries its HMAC under the run's link key as a second
ZeroMQ frame (agents/link_client.py, protocol/link_secrets.py). The master's receive
call is replaced by one that drops, unread, every message that does not verify: a
client without the key never reaches Locust, so it is never registered as a worker and
the master sends it nothing (no phase, no stop, no heartbeat). Each such client is
reported once as a ``link_refused`` event (the first ``MAX_REPORTED`` of them; then one
event says the rest are counted only). What the master sends a worker is signed for that
worker (``to_worker``): the worker hears nothing else.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any, cast

from loadtower.protocol.link_secrets import mac, to_worker, verify

MAX_REPORTED = 20
IDENTITY_SHOWN = 48  # bytes of a refused client's identity shown (repr: no raw bytes)
# messages read straight from ZeroMQ in a row before one goes through the green socket
# again (which also tells the other greenlets what the socket can do now)
QUICK_MAX = 32


@functools.cache
def _reads() -> SimpleNamespace:
    """What the master's reads take from pyzmq, msgpack and Locust, imported once: they
    are deferred (only the master process loads Locust), and a read is made per message,
    where an import statement each time cost the master about 6% of its CPU."""
    import msgpack.exceptions as msgerr  # type: ignore[import-untyped]  # no stubs
    import zmq
    from locust.exception import RPCError, RPCReceiveError
    from locust.rpc.protocol import Message

    return SimpleNamespace(
        ExtraData=msgerr.ExtraData, ZMQError=zmq.ZMQError, Again=zmq.Again,
        RPCError=RPCError, RPCReceiveError=RPCReceiveError, Message=Message,
        recv=zmq.backend.Socket.recv, get=zmq.backend.Socket.get, NOBLOCK=zmq.NOBLOCK,
        RCVMORE=zmq.RCVMORE)


class LinkGuard:
    def __init__(self, key: bytes, report: Callable[[str, dict[str, Any]], None],
                 heartbeat_every: float = 0.0) -> None:
        self.key = key
        self.report = report  # (message, data) of a link_refused event
        self.refused: dict[bytes, int] = {}  # identity -> messages dropped
        self.silenced = False
        self.heartbeat_every = heartbeat_every
        self.heartbeat_sent: dict[bytes, float] = {}  # identity -> last answer (`clock`)
        self.clock = time.monotonic
        self.quick = 0  # messages read straight from ZeroMQ since the last green read

    def heartbeat_due(self, identity: bytes) -> bool:
        """Whether a heartbeat to this worker goes now (and is then counted as sent): one
        every `heartbeat_every` seconds at most (protocol/heartbeats.py; 0: each one);
        everything else the master sends goes."""
        if self.heartbeat_every <= 0:
            return True
        now = self.clock()
        last = self.heartbeat_sent.get(identity)
        if last is not None and now - last < self.heartbeat_every:
            return False
        self.heartbeat_sent[identity] = now
        return True

    def wrap(self, server: Any) -> None:
        """Make the Locust rpc `server` (locust.rpc.zmqrpc.Server) hear only signed
        messages, and sign what it sends to each worker."""
        import zmq.error as zmqerr
        from locust.exception import RPCSendError
        from locust.util.exception_handler import retry

        key = self.key

        @retry()
        def send_to_client(msg: Any) -> None:
            identity = msg.node_id.encode()
            if msg.type == "heartbeat" and not self.heartbeat_due(identity):
                return
            payload = msg.serialize()
            try:
                server.socket.send_multipart(
                    [identity, payload, mac(key, to_worker(identity), payload)])
            except zmqerr.ZMQError as exc:
                raise RPCSendError("ZMQ sent failure") from exc

        server.recv_from_client = lambda: self.recv(server)
        server.send_to_client = send_to_client

    def recv(self, server: Any) -> tuple[str, Any]:
        n = _reads()
        while True:
            try:
                frames = self.frames(server.socket)
            except n.ZMQError as exc:
                raise n.RPCError("ZMQ network broken") from exc
            if len(frames) == 3 and verify(self.key, frames[0], frames[1], frames[2]):
                addr = frames[0].decode(errors="replace")
                try:
                    return addr, n.Message.unserialize(frames[1])
                except (UnicodeDecodeError, n.ExtraData) as exc:
                    raise n.RPCReceiveError("ZMQ interrupted or corrupted message", addr=addr
                                            ) from exc
            self.refuse(frames)

    def frames(self, sock: Any) -> list[bytes]:
        """The next message's frames. While messages wait, up to QUICK_MAX in a row are
        read straight from ZeroMQ: the green socket's own read checks the socket's state
        through Python enum arithmetic after every message, a fifth of the master's CPU at
        a thousand workers (bench/fleet.py). Then, and whenever none waits, the green read:
        it waits for the next message without holding up the other greenlets, and wakes
        any that wait on the socket."""
        n = _reads()
        if self.quick < QUICK_MAX:
            try:
                frames = [n.recv(sock, n.NOBLOCK)]
            except n.Again:
                pass
            else:  # a message's frames come together: the rest are there
                while n.get(sock, n.RCVMORE):
                    frames.append(n.recv(sock, n.NOBLOCK))
                self.quick += 1
                return frames
        self.quick = 0
        return cast(list[bytes], sock.recv_multipart())

    def refuse(self, frames: list[bytes]) -> None:
        identity = frames[0] if frames else b""
        seen = identity in self.refused
        self.refused[identity] = self.refused.get(identity, 0) + 1
        if seen:
            return
        shown = repr(identity[:IDENTITY_SHOWN])
        if len(self.refused) <= MAX_REPORTED:
            self.report(
                f"refused a client of the Locust master that did not prove the run's link key "
                f"(ZeroMQ identity {shown}, {len(frames) - 1} frame(s)): it is sent nothing",
                {"identity": shown, "frames": len(frames) - 1},
            )
        elif not self.silenced:
            self.silenced = True
            self.report(
                f"over {MAX_REPORTED} clients without the run's link key refused; "
                "further ones are refused without an event each",
                {"identity": shown, "refused_clients": len(self.refused)},
            )
