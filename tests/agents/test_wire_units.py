"""The wire sender without a database: the CQL v4 encodings and decodings, the token
ring, the arena, and the native loops against a socket whose far end the test plays
(answers out of order, errors behind warnings, a frame larger than the read buffer,
a silent node, a dropped connection). Against real Cassandra: test_wire_integration."""

from __future__ import annotations

import socket
import struct
import time
import uuid
from collections.abc import Iterator

import numpy as np
import pytest
from cassandra.murmur3 import murmur3

from loadtower.agents.cql import native_kernels as k
from loadtower.agents.cql import wire_codec as w
from loadtower.agents.cql import wire_kernels as wk
from loadtower.agents.cql import wire_sender as ws
from loadtower.agents.cql.wire_conn import Ring, topology
from loadtower.agents.measure import new_hist

STMT_ID = bytes(range(16))


def _prepared_body(types: list[int], pk: list[int], global_spec: bool = True) -> bytes:
    body = struct.pack(">i", w.RESULT_PREPARED) + struct.pack(">H", 16) + STMT_ID
    body += struct.pack(">iii", 1 if global_spec else 0, len(types), len(pk))
    body += b"".join(struct.pack(">H", i) for i in pk)
    if global_spec:
        body += w.string("ks") + w.string("t")
    for i, t in enumerate(types):
        if not global_spec:
            body += w.string("ks") + w.string("t")
        body += w.string(f"c{i}") + struct.pack(">H", t)
    return body + struct.pack(">ii", 4, 0)  # result metadata: no columns


def _statement(types: list[int], pk: list[int]) -> w.Statement:
    return w.Statement("s", w.read_prepared(_prepared_body(types, pk)), w.CONSISTENCY["ONE"])


@pytest.mark.parametrize("global_spec", [True, False])
def test_prepared_metadata_is_read(global_spec: bool) -> None:
    info = w.read_prepared(_prepared_body([w.FLOAT, w.UUID, w.VARCHAR], [0], global_spec))
    assert info == w.PreparedInfo(STMT_ID, [w.FLOAT, w.UUID, w.VARCHAR], [0])


def test_execute_frame_layout_and_routing_key() -> None:
    stmt = _statement([w.VARCHAR, w.BIGINT], [0])
    frame, key = stmt.execute(("user1", 7))
    version, flags, stream, opcode, length = w.HEADER.unpack(frame[: w.HEADER_LEN])
    assert (version, flags, stream, opcode, length) == (4, 0, 0, w.EXECUTE, len(frame) - 9)
    r = w.Reader(frame[9:])
    assert r.short_bytes() == STMT_ID
    assert r.short() == w.CONSISTENCY["ONE"]
    assert r.take(1)[0] == w.VALUES | w.SKIP_METADATA
    assert r.short() == 2
    assert r.bytes() == b"user1" and r.bytes() == struct.pack(">q", 7)
    assert r.at == len(frame) - 9
    assert key == b"user1"


def test_composite_routing_key_is_the_partitioners() -> None:
    stmt = _statement([w.FLOAT, w.UUID], [1, 0])
    rid = uuid.UUID(int=12345)
    _, key = stmt.execute((1.5, rid))
    pack = struct.pack(">f", 1.5)
    assert key == (struct.pack(">H", 16) + rid.bytes + b"\0"
                   + struct.pack(">H", len(pack)) + pack + b"\0")


def test_batch_frame_has_every_row() -> None:
    stmt = _statement([w.BIGINT], [0])
    frame, key = stmt.batch([(1,), (2,), (3,)], w.CONSISTENCY["QUORUM"])
    assert frame[4] == w.BATCH and key == struct.pack(">q", 1)
    r = w.Reader(frame[9:])
    assert r.take(1)[0] == w.UNLOGGED and r.short() == 3
    for n in (1, 2, 3):
        assert r.take(1)[0] == 1 and r.short_bytes() == STMT_ID and r.short() == 1
        assert r.bytes() == struct.pack(">q", n)
    assert r.short() == w.CONSISTENCY["QUORUM"] and r.take(1) == b"\0"


def test_bad_values_are_named() -> None:
    with pytest.raises(w.ProtocolError, match="takes 2 values, got 1"):
        _statement([w.VARCHAR, w.INT], [0]).execute(("x",))
    with pytest.raises(w.ProtocolError, match="0x0030"):
        w.encoder(w.UDT)


def test_warnings_and_rows_are_read() -> None:
    warned = struct.pack(">H", 2) + w.string("big batch") + w.string("another") + b"rest"
    assert w.strip_flags(w.WARNING, warned) == b"rest"
    rows = struct.pack(">iii", w.RESULT_ROWS, 1, 2) + w.string("system") + w.string("peers")
    rows += w.string("rpc_address") + struct.pack(">H", w.INET)
    rows += w.string("tokens") + struct.pack(">HH", w.SET, w.VARCHAR)
    tokens = struct.pack(">i", 2) + b"".join(struct.pack(">i", len(t)) + t for t in (b"-5", b"9"))
    rows += struct.pack(">i", 1) + struct.pack(">i", 4) + bytes([127, 0, 0, 2])
    rows += struct.pack(">i", len(tokens)) + tokens
    assert w.read_rows(rows) == [{"rpc_address": "127.0.0.2", "tokens": ["-5", "9"]}]
    err = w.read_error(struct.pack(">i", 0x1200) + w.string("timed out"))
    assert (err.code, err.message) == (0x1200, "timed out")
    with pytest.raises(w.ProtocolError, match="ended early"):
        w.read_error(b"\0\0")


def test_ring_owner_is_the_first_token_at_or_after_the_keys() -> None:
    keys = [f"user{i}".encode() for i in range(200)]
    tokens = sorted(murmur3(key) for key in keys[:3])
    ring = Ring({tokens[0]: 0, tokens[1]: 1, tokens[2]: 2})
    for key in keys:
        t = murmur3(key)
        expected = next((i for i, tok in enumerate(tokens) if tok >= t), 0)  # wraps to 0
        assert ring.host(key) == expected
    assert Ring({}).host(b"x") == 0


# -- the native loops against a socket pair ---------------------------------------------
class Node:
    """The far end of a socket pair, playing a node: reads frames, answers as told."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.sock.settimeout(10)
        self.buf = b""

    def frames(self, count: int) -> list[tuple[int, bytes]]:
        out = []
        while len(out) < count:
            while len(self.buf) < 9 or len(self.buf) < 9 + struct.unpack(">i", self.buf[5:9])[0]:
                self.buf += self.sock.recv(65536)
            length = struct.unpack(">i", self.buf[5:9])[0]
            out.append((struct.unpack(">h", self.buf[2:4])[0], self.buf[: 9 + length]))
            self.buf = self.buf[9 + length :]
        return out

    def answer(self, stream: int, opcode: int = w.RESULT, body: bytes = b"\0\0\0\1",
               flags: int = 0) -> None:
        self.sock.sendall(struct.pack(">BBhBi", 0x84, flags, stream, opcode, len(body)) + body)


@pytest.fixture
def wired() -> Iterator[tuple[ws.WireSender, Node]]:
    ours, theirs = socket.socketpair()
    session = ws.WireSession()
    session.hosts = ["node"]
    session.table = np.zeros((1, wk.CONN_W), np.int64)
    session.table[0, wk.C_FD], session.table[0, wk.C_GEN] = ours.fileno(), 1
    session.table[0, wk.C_STATE] = wk.UP
    sender = ws.WireSender(session, 4, new_hist().counts_len, 16, 0.002)
    sender.harvested = int(time.time()) - 2
    try:
        yield sender, Node(theirs)
    finally:
        sender.stop(5)
        ours.close()
        theirs.close()


def _push(sender: ws.WireSender, count: int, op: int = 0) -> list[bytes]:
    stmt = _statement([w.VARCHAR], [0])
    frames = [stmt.execute((f"k{i}",))[0] for i in range(count)]
    now = time.monotonic_ns()
    assert sender.push([(0, f) for f in frames], [op] * count, [now] * count) == count
    return frames


def _totals(sender: ws.WireSender, wait_for: int) -> dict:
    deadline = time.monotonic() + 10
    while sender.ctx[k.COMPLETED] < wait_for and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.05)
    ops, errors = 0, {}
    sender.harvested = int(time.time()) - 3  # read every second up to now (read ones are cleared)
    for _s, _op, sample in sender.harvest(int(time.time()) + 1):
        ops += sample["ops"]
        for name, n in sample["errors"].items():
            errors[name] = errors.get(name, 0) + n
    return {"ops": ops, "errors": errors}


def test_frames_go_out_whole_and_answers_end_their_ops(wired) -> None:  # noqa: ANN001
    sender, node = wired
    sent = _push(sender, 3)
    sender.start()
    got = node.frames(3)
    streams = [s for s, _ in got]
    assert sorted(streams) == [1, 2, 3]  # slot index + 1
    for (_stream, data), frame in zip(got, sent, strict=True):
        assert data[:2] + data[4:] == frame[:2] + frame[4:]  # only the stream id was set
    node.answer(streams[2])  # out of order, one behind a warning, one an error
    node.answer(streams[0], w.ERROR, struct.pack(">H", 1) + w.string("careful")
                + struct.pack(">i", 0x1100) + w.string("write timeout"), flags=w.WARNING)
    node.answer(streams[1], w.ERROR, struct.pack(">i", 0x1200) + w.string("read timeout"))
    totals = _totals(sender, 3)
    assert totals == {"ops": 3, "errors": {"CassErrorServerWriteTimeout": 1,
                                           "CassErrorServerReadTimeout": 1}}
    assert sender.in_flight() == 0
    assert (sender.slots[:, k.S_STATE] == wk.FREE).all()


def test_a_frame_larger_than_the_read_buffer_is_skipped_whole(wired) -> None:  # noqa: ANN001
    sender, node = wired
    sender.rbufs = np.zeros((1, 64), np.uint8)
    _push(sender, 2)
    sender.start()
    (s1, _), (s2, _) = node.frames(2)
    node.answer(s1, body=b"\0\0\0\2" + bytes(1000))  # rows bigger than 64 bytes
    node.answer(s2)
    assert _totals(sender, 2) == {"ops": 2, "errors": {}}


def test_a_silent_node_times_out_and_a_late_answer_frees_the_stream(wired) -> None:  # noqa: ANN001
    sender, node = wired
    sender.ctx[wk.TIMEOUT_NS] = 200_000_000
    _push(sender, 1)
    sender.start()
    [(stream, _)] = node.frames(1)
    assert _totals(sender, 1) == {"ops": 1, "errors": {"CassErrorLibRequestTimedOut": 1}}
    assert sender.slots[stream - 1, k.S_STATE] == wk.ABANDONED  # its stream is still taken
    node.answer(stream)
    deadline = time.monotonic() + 5
    while sender.slots[stream - 1, k.S_STATE] != wk.FREE and time.monotonic() < deadline:
        time.sleep(0.01)
    assert sender.slots[stream - 1, k.S_STATE] == wk.FREE
    assert _totals(sender, 1)["ops"] == 0  # counted once


def test_a_dropped_connection_fails_its_ops_and_later_ones_find_no_host(wired) -> None:  # noqa: ANN001
    sender, node = wired
    _push(sender, 2)
    sender.start()
    node.frames(2)
    node.sock.close()
    assert _totals(sender, 2) == {"ops": 2, "errors": {"CassErrorLibWriteError": 2}}
    assert sender.session.table[0, wk.C_STATE] == wk.DOWN
    _push(sender, 3, op=1)
    time.sleep(0.3)
    assert _totals(sender, 2) == {"ops": 3, "errors": {"CassErrorLibNoHostsAvailable": 3}}


def test_the_arena_pads_rather_than_wraps_and_refuses_what_does_not_fit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(ws, "ARENA_BYTES", 100)
    session = ws.WireSession()
    session.table = np.zeros((1, wk.CONN_W), np.int64)
    sender = ws.WireSender(session, 2, new_hist().counts_len, 4, 0.002)
    frames = [bytes([i]) * 30 for i in range(1, 5)]
    assert sender.push([(0, f) for f in frames], [0] * 4, [0] * 4) == 3  # 90 of 100 bytes
    assert list(sender.q_off[:3]) == [0, 30, 60]
    sender.ctx[wk.ARENA_TAIL] = 60  # the sender has sent two
    sender.ctx[k.TAIL] = 2
    assert sender.push([(0, frames[3])], [0], [0]) == 1
    assert sender.q_off[3] == 100  # not 90: a frame lies whole, from the arena's start
    assert bytes(sender.arena[:30]) == frames[3]
    assert sender.push([(0, frames[0])], [0], [0]) == 1  # 130..160 fits (tail 60 + 100)
    assert sender.push([(0, frames[0])], [0], [0]) == 0  # 160..190 does not


def test_threads_finish_when_stopped() -> None:
    session = ws.WireSession()
    session.table = np.zeros((1, wk.CONN_W), np.int64)
    sender = ws.WireSender(session, 2, new_hist().counts_len, 4, 0.002)
    sender.start()
    threads = list(sender.threads)
    sender.stop(5)
    assert not any(t.is_alive() for t in threads)


def test_a_failed_write_ends_the_connection_and_its_ops(wired) -> None:  # noqa: ANN001
    sender, node = wired
    _push(sender, 1)
    sender.start()
    node.frames(1)  # in flight
    node.sock.shutdown(socket.SHUT_RD)  # the node reads no more: the next write fails
    _push(sender, 1)
    assert _totals(sender, 2) == {"ops": 2, "errors": {"CassErrorLibWriteError": 2}}
    assert sender.session.table[0, wk.C_STATE] == wk.DOWN
    assert (sender.slots[:, k.S_STATE] == wk.FREE).all()


def test_topology_lists_every_node_once_with_its_tokens() -> None:
    class Control:  # what topology() reads: the host it is on and system-table rows
        host = "10.0.0.1"

        def rows(self, cql: str) -> list[dict]:
            if "system.local" in cql:
                return [{"tokens": ["1", "5"]}]
            return [{"peer": "10.0.0.2", "rpc_address": "10.0.0.2", "tokens": ["3"]},
                    {"peer": "10.0.0.3", "rpc_address": "0.0.0.0", "tokens": ["7"]}]

    hosts, tokens = topology(Control(), ["10.0.0.1", "10.0.0.2"])  # type: ignore[arg-type]
    assert hosts == ["10.0.0.1", "10.0.0.2", "10.0.0.3"]
    assert tokens == [["1", "5"], ["3"], ["7"]]
    ring = Ring.from_tokens(tokens)
    assert (ring.tokens, ring.hosts) == ([1, 3, 5, 7], [0, 1, 0, 2])


def test_refresh_takes_in_a_node_that_joined_while_rows_last(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    class Control:  # a connection that connects, authenticates and closes, and no more
        def __init__(self, host: str, port: int, timeout_s: float) -> None:
            self.host = host

        def handshake(self, username: str | None, password: str | None) -> None:
            pass

        def close(self) -> None:
            pass

    nodes = {"10.0.0.1": ["1"], "10.0.0.2": ["5"]}
    monkeypatch.setattr(ws, "Conn", Control)
    monkeypatch.setattr(ws, "topology", lambda control, known: (list(nodes), list(nodes.values())))
    session = ws.WireSession()
    session.hosts, session.conns = ["10.0.0.1", "10.0.0.2"], [None, None]
    session.table = np.zeros((3, wk.CONN_W), np.int64)
    connected: list[int] = []
    monkeypatch.setattr(session, "repair_one", lambda i: connected.append(i) or True)
    nodes["10.0.0.3"] = ["3"]  # joined, and took tokens
    assert session.refresh() == 1
    assert session.hosts[2] == "10.0.0.3" and connected == [2]
    assert (session.ring.tokens, session.ring.hosts) == ([1, 3, 5], [0, 2, 1])
    nodes["10.0.0.4"] = ["7"]  # no row left for it: the ring sends its keys elsewhere
    assert session.refresh() == 0
    assert session.hosts == ["10.0.0.1", "10.0.0.2", "10.0.0.3"] and connected == [2]
    assert (session.ring.tokens, session.ring.hosts) == ([1, 3, 5], [0, 2, 1])


def test_ops_given_up_at_a_drain_are_counted_by_the_caller_and_never_recorded(wired) -> None:  # noqa: ANN001
    """A phase's drain bound passed with two ops in flight: `abandon` says two, and their
    answers, read when the next phase starts the sender again, are not recorded; the
    next phase's own ops are."""
    sender, node = wired
    _push(sender, 2)
    sender.start()
    (s1, _), (s2, _) = node.frames(2)
    sender.stop(0.0)  # the drain's bound has passed: no waiting for the two
    assert sender.abandon() == 2
    assert _totals(sender, 0) == {"ops": 0, "errors": {}}
    sender.start()  # the next phase
    node.answer(s1)
    node.answer(s2, w.ERROR, struct.pack(">i", 0x1200) + w.string("read timeout"))
    _push(sender, 1, op=1)
    [(s3, _)] = node.frames(1)
    node.answer(s3)
    assert _totals(sender, 3) == {"ops": 1, "errors": {}}  # only the next phase's op
    assert sender.in_flight() == 0


def test_a_native_second_carries_its_span() -> None:
    """The ring row keeps the earliest intended start and the latest completion, in
    wall-clock seconds, by atomic max (a cleared row needs no sentinel)."""
    session = ws.WireSession()
    session.table = np.zeros((1, wk.CONN_W), np.int64)
    sender = ws.WireSender(session, 2, new_hist().counts_len, 4, 0.002)
    sender.ctx[k.WALL_OFFSET] = 2_000 * 10**9  # wall = monotonic + 2000 s
    sender.harvested = 2_000 - 1
    for intended, done in ((300, 500), (100, 900), (200, 400)):  # ms
        k.record(sender.ctx, 0, intended * 10**6, intended * 10**6, done * 10**6, 0, 0)
    [(second, _op, sample)] = sender.harvest(2_000)
    assert second == 2_000
    assert (sample["first"], sample["last"]) == (2_000.1, 2_000.9)
