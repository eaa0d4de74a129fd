"""The acsylla path's native sender: a session of the C++ driver driven by
`native_kernels.send_loop`, and the queue and per-second counters it shares with Python.

The engine binds statements ahead of time (a fraction of a second of the schedule),
pushes them with their intended start times, and once a second reads what completed
in the second before: ops, late ops, errors by class and the service and response
HDR counts, all recorded by the driver's callback without Python.
"""

from __future__ import annotations

import ctypes
import threading
import time
from typing import Any

import numpy as np

from loadtower.agents.cql import native_api as api
from loadtower.agents.cql import native_kernels as k
from loadtower.agents.cql.tls import TlsOptions

QUEUE_LEN = 1 << 16
RING_SECONDS = 8
CONNECT_TIMEOUT_S = 30.0
CLOSE_TIMEOUT_S = 30.0
REQUEST_TIMEOUT_MS = 12_000


class NativeSession:
    """A C++-driver session of its own (the same driver acsylla wraps) for the sender.

    ``execute``/``batch`` only bind: they return (kind, pointer) for the sender's queue,
    so `CqlOps` builds native ops exactly as it builds awaitable ones."""

    def __init__(self) -> None:
        self.cluster = self.session = 0
        self.prepared: dict[str, api.Prepared] = {}

    def connect(self, contact_points: list[str], port: int, username: str | None,
                password: str | None, consistency: str, tls: TlsOptions | None = None,
                local_dc: str | None = None) -> None:
        lib = api.library()
        self.cluster = lib.cass_cluster_new()
        if tls is not None:
            ssl = api.ssl_options(tls)
            lib.cass_cluster_set_ssl(self.cluster, ssl)  # the cluster keeps its own reference
            lib.cass_ssl_free(ssl)
        if local_dc:
            code = lib.cass_cluster_set_load_balance_dc_aware(self.cluster, local_dc.encode(), 0, 0)
            if code != 0:
                lib.cass_cluster_free(self.cluster)
                self.cluster = 0
                raise api.NativeError(f"local_dc {local_dc!r}: {api.error_name(code)}")
        lib.cass_cluster_set_contact_points(self.cluster, ",".join(contact_points).encode())
        lib.cass_cluster_set_port(self.cluster, port)
        if username:
            lib.cass_cluster_set_credentials(self.cluster, username.encode(),
                                             (password or "").encode())
        lib.cass_cluster_set_num_threads_io(self.cluster, 1)
        lib.cass_cluster_set_core_connections_per_host(self.cluster, 1)
        lib.cass_cluster_set_token_aware_routing(self.cluster, 1)
        lib.cass_cluster_set_connect_timeout(self.cluster, int(CONNECT_TIMEOUT_S * 1000))
        lib.cass_cluster_set_request_timeout(self.cluster, REQUEST_TIMEOUT_MS)
        lib.cass_cluster_set_consistency(self.cluster, api.CONSISTENCY[consistency.upper()])
        # the driver's default coalesce delay (200 us), as raw acsylla runs: 0 costs the
        # I/O thread more timer wake-ups per request, longer ones hold requests back
        self.session = lib.cass_session_new()
        try:
            api.wait(lib.cass_session_connect(self.session, self.cluster),
                     f"connecting to {','.join(contact_points)}:{port}", CONNECT_TIMEOUT_S)
        except api.NativeError:
            self.close()  # nothing left behind by a failed connect
            raise

    def prepare(self, statements: dict[str, str]) -> None:
        lib = api.library()
        for old in self.prepared.values():
            lib.cass_prepared_free(old.pointer)
        self.prepared = {}
        for name, cql in statements.items():
            future = lib.cass_session_prepare(self.session, cql.encode())
            api.wait(future, f"preparing '{name}'", CONNECT_TIMEOUT_S)
            pointer = lib.cass_future_get_prepared(future)
            lib.cass_future_free(future)
            self.prepared[name] = api.Prepared(name, pointer, cql.count("?"))

    def execute(self, name: str, params: tuple) -> tuple[int, int]:
        return 0, self.prepared[name].bind(params)

    def batch(self, name: str, rows: list[tuple]) -> tuple[int, int]:
        lib = api.library()
        batch = lib.cass_batch_new(api.BATCH_UNLOGGED)
        prepared = self.prepared[name]
        for row in rows:
            stmt = prepared.bind(row)
            lib.cass_batch_add_statement(batch, stmt)
            lib.cass_statement_free(stmt)
        return 1, int(batch)

    def close(self) -> None:
        lib = api.library()
        if self.session:
            future = lib.cass_session_close(self.session)
            lib.cass_future_wait_timed(future, int(CLOSE_TIMEOUT_S * 1e6))
            lib.cass_future_free(future)
            lib.cass_session_free(self.session)
        for prepared in self.prepared.values():
            lib.cass_prepared_free(prepared.pointer)
        if self.cluster:
            lib.cass_cluster_free(self.cluster)
        self.cluster = self.session = 0
        self.prepared = {}


class SenderCore:
    """What both native senders share: the context array, the slots, the per-second ring
    of counters and HDR counts, and reading finished seconds out of it."""

    def __init__(self, max_ops: int, hist_len: int, max_in_flight: int, late_s: float,
                 max_slots: int) -> None:
        self.ctx = np.zeros(k.CTX_LEN, np.int64)
        self.scratch = np.zeros(8, np.int64)
        nslots = min(2 * max_in_flight + 1, max_slots)
        self.slots = np.zeros((nslots, k.SLOT_W), np.int64)
        self.counts = np.zeros((RING_SECONDS, max_ops, 2, hist_len), np.int64)
        self.stats = np.zeros((RING_SECONDS, max_ops, k.STATS_W), np.int64)
        libc = ctypes.CDLL(None)
        ctx = self.ctx
        ctx[k.FN_CLOCK] = ctypes.cast(libc.clock_gettime, ctypes.c_void_p).value or 0
        ctx[k.FN_SLEEP] = ctypes.cast(libc.clock_nanosleep, ctypes.c_void_p).value or 0
        ctx[k.MAX_IN_FLIGHT] = max_in_flight
        ctx[k.LATE_NS] = int(late_s * 1e9)
        ctx[k.COUNTS], ctx[k.STATS] = self.counts.ctypes.data, self.stats.ctypes.data
        ctx[k.SCRATCH] = self.scratch.ctypes.data
        ctx[k.NOPS], ctx[k.RING], ctx[k.HIST_LEN] = max_ops, RING_SECONDS, hist_len
        ctx[k.NSLOTS], ctx[k.CTX_ADDR] = nslots, ctx.ctypes.data
        self.harvested = int(time.time()) - 1

    def set_max_in_flight(self, count: int) -> None:
        """The phase's cap on ops in flight (the slots were sized for the first phase's)."""
        self.ctx[k.MAX_IN_FLIGHT] = max(1, min(count, (self.slots.shape[0] - 1) // 2))

    def in_flight(self) -> int:
        return int(self.ctx[k.SENT] - self.ctx[k.COMPLETED])

    def wait_in_flight(self, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while self.in_flight() and time.monotonic() < deadline:
            time.sleep(0.01)

    def abandon(self) -> int:
        """Give up on the ops in flight now (a phase's drain bound passed): their
        completion is not recorded (the kernel checks DISCARD_BEFORE); how many they are.
        (Between the two steps an op may end unrecorded and uncounted: only an op that
        outlived the client's own request timeout can, by nanoseconds.)"""
        self.ctx[k.DISCARD_BEFORE] = time.monotonic_ns()  # every op sent so far is older
        return self.in_flight()

    # -- finished seconds -------------------------------------------------------------
    def harvest(self, upto: int, final: bool = False) -> list[tuple[int, int, dict[str, Any]]]:
        """(second, op index, sample) for every op with ops in seconds (harvested, upto];
        each ring slot read is cleared for its next turn. `final` (the sender is stopped,
        all read): the next phase's ops may come in seconds read now, read them again."""
        out = []
        first = max(self.harvested + 1, upto - RING_SECONDS + 2)
        for second in range(first, upto + 1):
            ring = second % RING_SECONDS
            for op in range(self.stats.shape[1]):
                row = self.stats[ring, op]
                if row[k.ST_OPS] and row[k.ST_SECOND] == second:
                    pairs = row[k.ST_ERR:].reshape(k.ERR_PAIRS, 2)
                    errors = {api.error_name(int(c)): int(n) for c, n in pairs if c}
                    out.append((second, op, {
                        "ops": int(row[k.ST_OPS]), "late": int(row[k.ST_LATE]),
                        "first": (k.FIRST_BASE - int(row[k.ST_FIRST])) / 1e9,
                        "last": int(row[k.ST_LAST]) / 1e9,
                        "errors": errors, "service": self.counts[ring, op, 0].copy(),
                        "response": self.counts[ring, op, 1].copy()}))
                if row[k.ST_OPS]:
                    row[:] = 0
                    self.counts[ring, op] = 0
        self.harvested = upto - RING_SECONDS if final else max(self.harvested, upto)
        return out


class NativeSender(SenderCore):
    """The queue of bound statements and the sending thread, over the C++ driver."""

    def __init__(self, session: NativeSession, max_ops: int, hist_len: int,
                 max_in_flight: int, late_s: float) -> None:
        super().__init__(max_ops, hist_len, max_in_flight, late_s, 1 << 30)
        self.session = session
        self.q_stmt = np.zeros(QUEUE_LEN, np.int64)
        self.q_kind = np.zeros(QUEUE_LEN, np.int64)
        self.q_op = np.zeros(QUEUE_LEN, np.int64)
        self.q_t = np.zeros(QUEUE_LEN, np.int64)
        ctx = self.ctx
        for slot, name in ((k.FN_EXECUTE, "cass_session_execute"),
                           (k.FN_EXECUTE_BATCH, "cass_session_execute_batch"),
                           (k.FN_STMT_FREE, "cass_statement_free"),
                           (k.FN_BATCH_FREE, "cass_batch_free"),
                           (k.FN_SET_CALLBACK, "cass_future_set_callback"),
                           (k.FN_ERROR_CODE, "cass_future_error_code"),
                           (k.FN_FUTURE_FREE, "cass_future_free")):
            ctx[slot] = api.address(name)
        assert k.on_done.address is not None  # a cfunc is compiled when decorated
        ctx[k.CALLBACK] = k.on_done.address
        ctx[k.SESSION] = session.session
        self.slots[:, k.S_CTX] = ctx.ctypes.data
        self.thread: threading.Thread | None = None

    # -- the sending thread ---------------------------------------------------------------
    def start(self) -> None:
        self.ctx[k.WALL_OFFSET] = time.time_ns() - time.monotonic_ns()
        self.ctx[k.RUNNING] = 1
        self.thread = threading.Thread(target=k.send_loop, name="lt-native-send", daemon=True,
                                       args=(self.ctx, self.q_stmt, self.q_kind, self.q_op,
                                             self.q_t, self.slots))
        self.thread.start()

    def stop(self, timeout_s: float = CLOSE_TIMEOUT_S) -> None:
        """Stop sending, drop what is queued, wait (`timeout_s`) for the ops in flight."""
        self.ctx[k.RUNNING] = 0
        if self.thread is not None:
            self.thread.join(CLOSE_TIMEOUT_S)  # it looks at RUNNING every 20 ms
            self.thread = None
        self.drop_queued()
        self.wait_in_flight(timeout_s)

    def drop_queued(self) -> None:
        lib = api.library()
        for i in range(int(self.ctx[k.TAIL]), int(self.ctx[k.HEAD])):
            j = i % QUEUE_LEN
            if self.q_stmt[j]:
                (lib.cass_batch_free if self.q_kind[j] else lib.cass_statement_free)(
                    int(self.q_stmt[j]))
                self.q_stmt[j] = 0
        self.ctx[k.TAIL] = self.ctx[k.HEAD]

    # -- the queue (one producer: the engine's loop) -------------------------------------
    def room(self) -> int:
        return QUEUE_LEN - int(self.ctx[k.HEAD] - self.ctx[k.TAIL])

    def push(self, items: list[tuple[int, int]], ops: list[int], intended_ns: list[int]) -> int:
        """Queue ops (at most `room()`), in intended-time order: (kind, pointer) each."""
        kinds, pointers = [kind for kind, _ in items], [pointer for _, pointer in items]
        head, n = int(self.ctx[k.HEAD]), len(pointers)
        start = head % QUEUE_LEN
        first = min(n, QUEUE_LEN - start)  # up to the end of the ring, then from its start
        for part, at, count in ((slice(0, first), start, first), (slice(first, n), 0, n - first)):
            if count:
                self.q_stmt[at : at + count] = pointers[part]
                self.q_kind[at : at + count] = kinds[part]
                self.q_op[at : at + count] = ops[part]
                self.q_t[at : at + count] = intended_ns[part]
        self.ctx[k.HEAD] = head + n  # after the entries: the sender reads HEAD first
        return n


def warm() -> None:
    """Compile the native loops once (numba caches the machine code), so an agent's first
    run phase does not wait for the compiler."""
    from loadtower.agents.measure import new_hist

    sender = NativeSender(NativeSession(), 2, new_hist().counts_len, 2, 0.002)
    k.send_loop(sender.ctx, sender.q_stmt, sender.q_kind, sender.q_op, sender.q_t, sender.slots)
    k.record(sender.ctx, 0, 0, 0, 1000, 0, 0)


if __name__ == "__main__":
    warm()
