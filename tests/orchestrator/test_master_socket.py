"""The Locust master's socket holds at most RECEIVE_HWM messages from a worker it does not
read (master_socket.py): a worker that keeps sending finds its own queue full, instead of
the master's memory growing with the backlog; what was queued arrives whole, in order."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
import zmq

from loadtower.agents import locust_setup as ls  # gevent's patches before Locust loads
from loadtower.orchestrator import master_socket

assert ls.gevent is not None

CHUNK = b"x" * (256 * 1024)  # a message: large enough that kernel buffers hold few


@contextmanager
def worker(port: int) -> Iterator[zmq.Socket]:
    """A DEALER with a send queue of 1, as a worker's link to the master."""
    ctx = zmq.Context()
    client = ctx.socket(zmq.DEALER)
    client.setsockopt(zmq.SNDHWM, 1)
    client.setsockopt(zmq.LINGER, 0)
    client.setsockopt(zmq.IDENTITY, b"worker-1")
    client.connect(f"tcp://127.0.0.1:{port}")
    try:
        yield client
    finally:
        client.close()
        ctx.term()


def _sent_until_full(client: zmq.Socket, count: int, settle_s: float = 1.0,
                     limit_s: float = 20.0) -> int:
    """Messages the worker gets out to an unread server before its sends would block:
    retried until no send went through for `settle_s` (ZeroMQ's I/O threads move what
    they can meanwhile), at most `limit_s`."""
    sent, moved, start = 0, time.monotonic(), time.monotonic()
    while sent < count and time.monotonic() - moved < settle_s:
        if time.monotonic() - start > limit_s:
            break
        try:
            client.send(CHUNK, zmq.NOBLOCK)
        except zmq.Again:
            time.sleep(0.01)
            continue
        sent, moved = sent + 1, time.monotonic()
    return sent


def _drain(server: object, expected: int, limit_s: float = 20.0) -> int:
    got, start = 0, time.monotonic()
    socket = server.socket  # type: ignore[attr-defined]
    while got < expected and time.monotonic() - start < limit_s:
        try:
            frames = socket.recv_multipart(zmq.NOBLOCK)
        except zmq.Again:
            time.sleep(0.01)
            continue
        assert frames == [b"worker-1", CHUNK]
        got += 1
    return got


@pytest.mark.parametrize("hwm", [4, 1000])
def test_an_unread_worker_fills_only_its_bound(hwm: int) -> None:
    server = master_socket.bounded_server_class(hwm)("127.0.0.1", 0)
    try:
        assert server.socket.getsockopt(zmq.RCVHWM) == hwm
        with worker(server.port) as client:
            sent = _sent_until_full(client, count=200)
        if hwm == 4:
            # the bound, the client's queue of 1 and what the kernel's buffers hold
            # between them: far below the 200 an unbounded master takes in
            assert sent < 60, sent
        else:
            assert sent == 200
    finally:
        server.socket.close(linger=0)


def test_what_was_queued_arrives_whole_when_the_master_reads_again() -> None:
    server = master_socket.bounded_server_class(4)("127.0.0.1", 0)
    try:
        with worker(server.port) as client:
            sent = _sent_until_full(client, count=50)
            assert sent < 50  # it filled: the worker holds the rest
            assert _drain(server, sent) == sent
    finally:
        server.socket.close(linger=0)


def test_install_makes_locusts_runners_create_the_bounded_server() -> None:
    from locust.rpc import zmqrpc

    before = zmqrpc.Server
    try:
        cls = master_socket.install()
        assert zmqrpc.Server is cls and getattr(cls, "loadtower_bounded", False)
        assert master_socket.install() is cls  # once: not a subclass of itself
        server = cls("127.0.0.1", 0)
        try:
            assert server.socket.getsockopt(zmq.RCVHWM) == master_socket.RECEIVE_HWM
        finally:
            server.socket.close(linger=0)
    finally:
        zmqrpc.Server = before
