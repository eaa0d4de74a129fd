"""The wire sender: loadtower's own CQL connections, one per node, driven by
`wire_kernels` (a sending and a reading thread, no driver and no Python per op).

`WireSession` connects (handshake, SASL PLAIN), learns the token ring from the system
tables, prepares statements on every connection and encodes ops into ready-made frames
with the node that owns each key. `WireSender` queues those frames with their intended
times in an arena the sending thread reads, and shares the per-second counters of the
driver-based sender (`native_sender.SenderCore`). A broken connection is noticed by the
reading thread; `WireSession.repair` reconnects it (and prepares again) from Python.
"""

from __future__ import annotations

import ctypes
import threading
import time

import numpy as np

from loadtower.agents.cql import native_kernels as k
from loadtower.agents.cql import wire_codec as w
from loadtower.agents.cql import wire_kernels as wk
from loadtower.agents.cql.native_sender import (
    CLOSE_TIMEOUT_S,
    QUEUE_LEN,
    REQUEST_TIMEOUT_MS,
    SenderCore,
)
from loadtower.agents.cql.wire_conn import Conn, Ring, WireConnError, topology

CONNECT_TIMEOUT_S = 5.0
ARENA_BYTES = 32 << 20
RECV_BUFFER = 1 << 20
MAX_STREAMS = 32767  # a v4 stream id is a positive int16; ours are slot index + 1
MIN_ROWS = 8  # connection rows, at least twice the nodes known at connect


class WireSession:
    """One connection per node; `execute`/`batch` only encode: (node, frame)."""

    def __init__(self) -> None:
        self.hosts: list[str] = []
        self.conns: list[Conn | None] = []
        self.retired: list[Conn] = []  # replaced sockets, closed at `close` (see repair)
        self.table = np.zeros((0, wk.CONN_W), np.int64)
        self.ring = Ring({})
        self.cql: dict[str, str] = {}
        self.statements: dict[str, w.Statement] = {}
        self.port, self.consistency = 9042, 1
        self.username: str | None = None
        self.password: str | None = None

    def connect(self, contact_points: list[str], port: int, username: str | None,
                password: str | None, consistency: str) -> None:
        self.port, self.username, self.password = port, username, password
        self.consistency = w.CONSISTENCY[consistency.upper()]
        problems, control = [], None
        for host in contact_points:
            try:
                control = self._open(host)
                break
            except (WireConnError, w.ProtocolError) as exc:
                problems.append(str(exc))
        if control is None:
            raise WireConnError("; ".join(problems) or "no contact points")
        try:
            self.hosts, tokens = topology(control, contact_points)
            self.ring = Ring.from_tokens(tokens)
        except (WireConnError, w.ProtocolError):
            control.close()
            raise
        self.conns = [control] + [None] * (len(self.hosts) - 1)
        # rows to spare for nodes that join later (scale-out); unused rows stay down
        self.table = np.zeros((max(MIN_ROWS, 2 * len(self.hosts)), wk.CONN_W), np.int64)
        self._up(0, control)
        for i in range(1, len(self.hosts)):
            self.repair_one(i)  # a node down now is retried by `repair`

    def refresh(self) -> int:
        """Read the topology again (a connection of its own: the loops own the others)
        and take in nodes that joined and moved tokens; how many nodes it added."""
        problems = []
        for host in self.hosts:
            try:
                control = Conn(host, self.port, CONNECT_TIMEOUT_S)
            except WireConnError as exc:
                problems.append(str(exc))
                continue
            try:
                control.handshake(self.username, self.password)
                hosts, tokens = topology(control, self.hosts)
                break
            except (WireConnError, w.ProtocolError) as exc:
                problems.append(str(exc))
            finally:
                control.close()
        else:
            raise WireConnError("; ".join(problems) or "no node to ask")
        known, added = {h: i for i, h in enumerate(self.hosts)}, 0
        by_row: list[list[str]] = [[] for _ in self.hosts]
        for host, ts in zip(hosts, tokens, strict=True):
            if host not in known:
                if len(self.hosts) >= self.table.shape[0]:
                    continue  # no row left: its keys go to other nodes, which coordinate
                known[host] = len(self.hosts)
                self.hosts.append(host)
                self.conns.append(None)
                by_row.append([])
                self.repair_one(known[host])
                added += 1
            by_row[known[host]] = ts
        self.ring = Ring.from_tokens(by_row)
        return added

    def _open(self, host: str) -> Conn:
        conn = Conn(host, self.port, CONNECT_TIMEOUT_S)
        try:
            conn.handshake(self.username, self.password)
            for name, cql in self.cql.items():
                info = conn.prepare(cql)
                known = self.statements.get(name)
                if known is not None and known.info.id != info.id:
                    raise WireConnError(f"{conn.where} prepared '{name}' under another id")
        except (WireConnError, w.ProtocolError):
            conn.close()
            raise
        return conn

    def _up(self, i: int, conn: Conn) -> None:
        row = self.table[i]
        row[wk.C_FD] = conn.hand_over()
        row[wk.C_GEN] += 1
        row[wk.C_STATE] = wk.UP  # last: the loops look at the state first

    def repair_one(self, i: int) -> bool:
        try:
            conn = self._open(self.hosts[i])
        except (WireConnError, w.ProtocolError, OSError):
            return False
        old = self.conns[i]
        if old is not None:
            self.retired.append(old)  # its fd number must not be reused while loops run
        self.conns[i] = conn
        self._up(i, conn)
        return True

    def maintain(self, refresh: bool) -> None:
        """Take in the current topology (when asked) and reconnect broken connections."""
        if refresh:
            try:
                self.refresh()
            except WireConnError:
                pass  # no node answers now: the connections are retried below
        self.repair()

    def down(self) -> bool:
        return bool((self.table[: len(self.hosts), wk.C_STATE] == wk.DOWN).any())

    def repair(self) -> int:
        """Reconnect every node whose connection broke; how many are up after.
        (Only rows the reading thread marked down, or none runs: see wire_kernels.)"""
        for i in range(len(self.hosts)):
            if self.table[i, wk.C_STATE] == wk.DOWN:
                self.repair_one(i)
        return int((self.table[:, wk.C_STATE] == wk.UP).sum())

    def prepare(self, statements: dict[str, str]) -> None:
        """Prepare on every node (between phases: the loops are stopped). A node that
        fails is set down (and retried); if none succeeds, its reason is raised."""
        self.maintain(refresh=True)  # nodes that joined or came back between phases
        infos: dict[str, w.PreparedInfo] = {}
        failure: Exception | None = None
        for i, conn in enumerate(self.conns):
            if conn is None or self.table[i, wk.C_STATE] != wk.UP:
                continue
            conn.sock.settimeout(CONNECT_TIMEOUT_S)
            try:
                for name, cql in statements.items():
                    infos[name] = conn.prepare(cql)
                conn.hand_over()
            except (WireConnError, w.ProtocolError, OSError) as exc:
                failure = exc
                self.table[i, wk.C_STATE] = wk.DOWN
        if failure is not None and len(infos) < len(statements):
            raise failure
        if not infos and statements:
            raise WireConnError(f"no node of {', '.join(self.hosts)} is up to prepare on")
        self.cql = dict(statements)
        self.statements = {name: w.Statement(name, info, self.consistency)
                           for name, info in infos.items()}

    def execute(self, name: str, params: tuple) -> tuple[int, bytes]:
        body, key = self.statements[name].execute(params)
        return (self.ring.host(key) if key and len(self.hosts) > 1 else 0), body

    def batch(self, name: str, rows: list[tuple]) -> tuple[int, bytes]:
        body, key = self.statements[name].batch(rows, self.consistency)
        return (self.ring.host(key) if key and len(self.hosts) > 1 else 0), body

    def close(self) -> None:
        for conn in [*self.conns, *self.retired]:
            if conn is not None:
                conn.close()
        self.conns, self.retired = [], []
        self.table[:, wk.C_STATE] = wk.DOWN


class WireSender(SenderCore):
    """The frame queue and arena, and the sending and reading threads."""

    def __init__(self, session: WireSession, max_ops: int, hist_len: int,
                 max_in_flight: int, late_s: float) -> None:
        super().__init__(max_ops, hist_len, max_in_flight, late_s, MAX_STREAMS)
        self.session = session
        self.q_off = np.zeros(QUEUE_LEN, np.int64)
        self.q_len = np.zeros(QUEUE_LEN, np.int64)
        self.q_conn = np.zeros(QUEUE_LEN, np.int64)
        self.q_op = np.zeros(QUEUE_LEN, np.int64)
        self.q_t = np.zeros(QUEUE_LEN, np.int64)
        self.arena = np.zeros(ARENA_BYTES, np.uint8)
        self.arena_head = 0  # absolute byte offsets; the sender keeps ctx[ARENA_TAIL]
        nconns = max(1, session.table.shape[0])
        self.rbufs = np.zeros((nconns, RECV_BUFFER), np.uint8)
        self.pollfds = np.zeros(nconns, np.int64)
        self.slots[:, wk.S_CONN] = -1
        libc = ctypes.CDLL(None, use_errno=True)
        ctx = self.ctx
        for slot, name in ((wk.FN_SEND, "send"), (wk.FN_RECV, "recv"), (wk.FN_POLL, "poll"),
                           (wk.FN_ERRNO, "__errno_location"), (wk.FN_SHUTDOWN, "shutdown")):
            ctx[slot] = ctypes.cast(getattr(libc, name), ctypes.c_void_p).value or 0
        ctx[wk.TIMEOUT_NS] = REQUEST_TIMEOUT_MS * 1_000_000
        ctx[wk.RECV_SCRATCH] = self.scratch.ctypes.data + 32
        self.threads: list[threading.Thread] = []

    # -- the threads ------------------------------------------------------------------
    def start(self) -> None:
        ctx = self.ctx
        ctx[k.WALL_OFFSET] = time.time_ns() - time.monotonic_ns()
        ctx[k.RUNNING] = ctx[wk.RECV_RUNNING] = 1
        table = self.session.table
        self.threads = [
            threading.Thread(target=wk.recv_loop, name="lt-wire-recv", daemon=True,
                             args=(ctx, self.slots, table, self.rbufs, self.pollfds)),
            threading.Thread(target=wk.send_loop, name="lt-wire-send", daemon=True,
                             args=(ctx, self.q_off, self.q_len, self.q_conn, self.q_op,
                                   self.q_t, self.slots, table, self.arena)),
        ]
        for thread in self.threads:
            thread.start()

    def stop(self, timeout_s: float = CLOSE_TIMEOUT_S) -> None:
        """Stop sending, drop what is queued, wait (`timeout_s`) for the ops in flight,
        stop reading (answers to ops still out are read, and ignored, at the next start)."""
        self.ctx[k.RUNNING] = 0
        if self.threads:
            self.threads[1].join(CLOSE_TIMEOUT_S)  # it looks at RUNNING every 20 ms
        self.ctx[k.TAIL] = self.ctx[k.HEAD]
        self.ctx[wk.ARENA_TAIL] = self.arena_head
        self.wait_in_flight(timeout_s)
        self.ctx[wk.RECV_RUNNING] = 0
        if self.threads:
            self.threads[0].join(CLOSE_TIMEOUT_S)  # it polls every 20 ms
        self.threads = []

    # -- the queue (one producer: the engine's loop) ------------------------------------
    def room(self) -> int:
        return QUEUE_LEN - int(self.ctx[k.HEAD] - self.ctx[k.TAIL])

    def push(self, items: list[tuple[int, bytes]], ops: list[int], intended_ns: list[int]) -> int:
        """Queue what fits of (node, frame) ops, in intended-time order; how many did."""
        ctx, size = self.ctx, ARENA_BYTES
        head, tail = int(ctx[k.HEAD]), int(ctx[k.TAIL])
        at, free_to = self.arena_head, int(ctx[wk.ARENA_TAIL]) + size
        n = min(len(items), QUEUE_LEN - (head - tail))
        chunk: list[bytes] = []
        chunk_at = at
        for j in range(n):
            frame = items[j][1]
            length = len(frame)
            start = at if at % size + length <= size else at + size - at % size  # lies whole
            if start + length > free_to:
                n = j
                break
            if start != at:  # padded to the arena's start
                self._copy(chunk_at, chunk)
                chunk, chunk_at = [], start
            q = (head + j) % QUEUE_LEN
            self.q_off[q], self.q_len[q], self.q_conn[q] = start, length, items[j][0]
            self.q_op[q], self.q_t[q] = ops[j], intended_ns[j]
            chunk.append(frame)
            at = start + length
        self._copy(chunk_at, chunk)
        self.arena_head = at
        ctx[k.HEAD] = head + n  # after the entries and their frames
        return n

    def _copy(self, at: int, frames: list[bytes]) -> None:
        if frames:
            data = b"".join(frames)
            start = at % ARENA_BYTES
            self.arena[start : start + len(data)] = np.frombuffer(data, np.uint8)


def warm() -> None:
    """Compile the wire loops once (numba caches the machine code)."""
    from loadtower.agents.measure import new_hist

    session = WireSession()
    session.table = np.zeros((1, wk.CONN_W), np.int64)
    sender = WireSender(session, 2, new_hist().counts_len, 2, 0.002)
    wk.send_loop(sender.ctx, sender.q_off, sender.q_len, sender.q_conn, sender.q_op,
                 sender.q_t, sender.slots, session.table, sender.arena)
    wk.recv_loop(sender.ctx, sender.slots, session.table, sender.rbufs, sender.pollfds)


if __name__ == "__main__":
    warm()
