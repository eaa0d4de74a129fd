"""The master hears only signed messages: real ZeroMQ sockets (Locust's own rpc classes)
on loopback, a worker that signs with the run's key and clients that do not."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from loadtower.agents import locust_setup as ls  # before locust: no monkey-patching
from loadtower.agents.link_client import sign_client
from loadtower.orchestrator.link_guard import MAX_REPORTED, QUICK_MAX, LinkGuard

KEY = b"r" * 32
WAIT_S = 20.0  # a bound for a loopback message, never a measured time


@pytest.fixture
def server() -> Iterator[Any]:
    from locust.rpc import zmqrpc

    srv = zmqrpc.Server("127.0.0.1", 0)
    try:
        yield srv
    finally:
        srv.close(linger=0)


def _client(server: Any, identity: str, key: bytes | None) -> Any:
    from locust.rpc import zmqrpc

    client = zmqrpc.Client("127.0.0.1", server.port, identity)
    if key is not None:
        sign_client(client, key, identity)
    return client


def _message(kind: str, data: Any, node: str) -> Any:
    from locust.rpc.protocol import Message

    return Message(kind, data, node)


def _recv(guard: LinkGuard, server: Any) -> tuple[str, Any]:
    with ls.gevent.Timeout(WAIT_S):
        return guard.recv(server)


def test_a_signed_worker_is_heard_and_an_impostor_is_dropped_unread(server: Any) -> None:
    events: list[tuple[str, dict]] = []
    guard = LinkGuard(KEY, lambda message, data: events.append((message, data)))
    guard.wrap(server)
    impostor = _client(server, "impostor_1", None)  # Locust's own client: no signature
    stranger = _client(server, "stranger_1", b"x" * 32)  # signs with another run's key
    worker = _client(server, "worker_1", KEY)
    try:
        impostor.send(_message("client_ready", "2.47.0", "impostor_1"))
        impostor.send(_message("heartbeat", {}, "impostor_1"))
        stranger.send(_message("client_ready", "2.47.0", "stranger_1"))
        worker.send(_message("client_ready", "2.47.0", "worker_1"))
        addr, msg = _recv(guard, server)  # via the wrapped server call Locust makes
        assert (addr, msg.type, msg.data) == ("worker_1", "client_ready", "2.47.0")
        # the ROUTER fair-queues its peers, so the others' messages may still be queued
        # behind the worker's: each further recv reads (and drops) what came before it
        for _ in range(50):
            if set(guard.refused) >= {b"impostor_1", b"stranger_1"}:
                break
            worker.send(_message("heartbeat", {}, "worker_1"))
            addr, msg = _recv(guard, server)
            assert (addr, msg.type) == ("worker_1", "heartbeat")
    finally:
        for client in (impostor, stranger, worker):
            client.close(linger=0)
    refused = {data["identity"] for _message_text, data in events}
    assert refused == {"b'impostor_1'", "b'stranger_1'"}  # each reported once
    assert set(guard.refused) == {b"impostor_1", b"stranger_1"}  # ROUTER fair-queues: counts vary
    assert all("it is sent nothing" in text for text, _data in events)


def test_the_wrapped_server_is_what_locust_calls(server: Any) -> None:
    guard = LinkGuard(KEY, lambda *_: None)
    guard.wrap(server)
    worker = _client(server, "worker_2", KEY)
    try:
        worker.send(_message("heartbeat", {"state": "ready"}, "worker_2"))
        with ls.gevent.Timeout(WAIT_S):
            addr, msg = server.recv_from_client()
        assert (addr, msg.type) == ("worker_2", "heartbeat")
    finally:
        worker.close(linger=0)


def test_a_flood_of_strangers_gives_a_bounded_number_of_events() -> None:
    events: list[str] = []
    guard = LinkGuard(KEY, lambda message, _data: events.append(message))
    for n in range(MAX_REPORTED + 50):
        guard.refuse([f"x{n}".encode(), b"payload"])
        guard.refuse([f"x{n}".encode(), b"payload"])
    assert len(events) == MAX_REPORTED + 1
    assert "further ones are refused without an event each" in events[-1]


def test_a_refused_identity_is_shown_escaped() -> None:
    events: list[str] = []
    guard = LinkGuard(KEY, lambda message, _data: events.append(message))
    guard.refuse([b"\x1b[2J\x07evil", b"p"])
    assert "\x1b" not in events[0] and "\\x1b[2J\\x07evil" in events[0]


def test_a_worker_hears_only_what_the_runs_master_signed(server: Any) -> None:
    """A process that took the master's port (it sends without the key) cannot command
    the worker: its phase is dropped; the real master's next message is heard."""
    from locust.rpc import zmqrpc

    guard = LinkGuard(KEY, lambda *_: None)
    worker = _client(server, "worker_3", KEY)
    try:
        worker.send(_message("client_ready", "2.47.0", "worker_3"))
        with ls.gevent.Timeout(WAIT_S):
            addr, _msg = guard.recv(server)  # the ROUTER now knows the worker
        assert addr == "worker_3"
        fake = _message("lt_phase", {"contact_points": ["10.6.6.6"]}, "worker_3")
        zmqrpc.BaseSocket.send_to_client(server, fake)  # Locust's own send: unsigned
        guard.wrap(server)
        server.send_to_client(_message("lt_stop", {"id": 1}, "worker_3"))
        with ls.gevent.Timeout(WAIT_S):
            heard = worker.recv()
        assert (heard.type, heard.data) == ("lt_stop", {"id": 1})
    finally:
        worker.close(linger=0)


def test_heartbeat_answers_are_spaced_by_the_grace_and_nothing_else_is() -> None:
    """The master answers a worker's heartbeat at most every heartbeat_reply_every(grace)
    (a sixth of it, at most 5 s; every one under a 12 s grace); a phase, a stop or
    anything else it sends always goes."""
    from loadtower.protocol.heartbeats import reply_every as heartbeat_reply_every

    assert heartbeat_reply_every(30.0) == 5.0
    assert heartbeat_reply_every(300.0) == 5.0
    assert heartbeat_reply_every(15.0) == 2.5
    assert heartbeat_reply_every(11.0) == 0.0 and heartbeat_reply_every(2.0) == 0.0

    class Socket:
        def __init__(self) -> None:
            self.sent: list[tuple[bytes, Any]] = []

        def send_multipart(self, frames: list[bytes]) -> None:
            self.sent.append((frames[0], frames[1]))

    fake = type("Server", (), {})()
    fake.socket = Socket()
    guard = LinkGuard(KEY, lambda message, data: None, heartbeat_every=5.0)
    guard.wrap(fake)
    clock = [1000.0]
    guard.clock = lambda: clock[0]
    for second in range(11):  # one heartbeat a second from each of two workers
        clock[0] = 1000.0 + second
        for node in ("w1", "w2"):
            fake.send_to_client(_message("heartbeat", None, node))
        if second == 3:
            fake.send_to_client(_message("lt_stop", {"id": 1}, "w1"))
    beats = [ident for ident, _ in fake.socket.sent]
    assert beats.count(b"w1") == 3 + 1 and beats.count(b"w2") == 3  # at 0, 5, 10 s; the stop
    every = LinkGuard(KEY, lambda message, data: None)  # heartbeat_every 0: each answered
    assert all(every.heartbeat_due(b"w1") for _ in range(5))


def test_a_burst_is_read_whole_and_in_order_then_the_read_waits_for_the_next(server: Any) -> None:
    """The guard reads waiting messages straight from ZeroMQ, QUICK_MAX in a row, then one
    through the green socket: every frame of every message arrives, in each worker's
    order, an impostor's messages among them are still dropped, and once none waits the
    read waits (without blocking other greenlets) for one sent later."""
    guard = LinkGuard(KEY, lambda *_: None)
    guard.wrap(server)
    green = server.socket.recv_multipart
    green_reads = [0]

    def counted() -> list[bytes]:
        green_reads[0] += 1
        return green()

    server.socket.recv_multipart = counted
    workers = [_client(server, f"worker_b{n}", KEY) for n in range(2)]
    impostor = _client(server, "impostor_b", None)
    burst = 5 * QUICK_MAX
    try:
        workers[0].send(_message("client_ready", "2.47.0", "worker_b0"))
        assert _recv(guard, server)[0] == "worker_b0"  # the burst below waits in full
        for n in range(burst):
            for w, worker in enumerate(workers):
                worker.send(_message("lt_line", {"n": n, "pad": "x" * 20_000}, f"worker_b{w}"))
            impostor.send(_message("lt_line", {"n": n}, "impostor_b"))
        ls.gevent.sleep(0.5)  # let ZeroMQ queue them: the quick reads take what waits
        seen: dict[str, list[int]] = {"worker_b0": [], "worker_b1": []}
        for _ in range(2 * burst):
            addr, msg = _recv(guard, server)
            assert len(msg.data["pad"]) == 20_000
            seen[addr].append(msg.data["n"])
        assert seen == {"worker_b0": list(range(burst)), "worker_b1": list(range(burst))}
        # the green read in between, not for each one
        assert 2 * burst // (QUICK_MAX + 1) - 1 <= green_reads[0] < burst
        assert guard.refused.get(b"impostor_b", 0) >= 1
        ls.gevent.spawn_later(0.3, workers[1].send, _message("heartbeat", {}, "worker_b1"))
        before = green_reads[0]
        addr, msg = _recv(guard, server)  # nothing waits: the green read waits for it
        assert (addr, msg.type) == ("worker_b1", "heartbeat") and green_reads[0] > before
    finally:
        server.socket.recv_multipart = green
        for client in (*workers, impostor):
            client.close(linger=0)
