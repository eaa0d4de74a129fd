"""The wire sender's native loops: CQL frames written and read without a driver.

`send_loop` (one thread) waits for each op's intended start, stamps a stream id into the
op's ready-made frame (Python encoded it ahead of time into the arena) and writes it to
the socket of the node that owns its key. `recv_loop` (another thread) polls the
sockets, splits what arrives into frames, finds each answer's op by its stream id and
records it, with `native_kernels.record`, into the same per-second counters the
driver-based sender fills. Requests unanswered for the request timeout, and those in
flight on a connection that breaks, are recorded as errors; Python reconnects.

A slot per op in flight; its stream id is its index + 1. Slot states change by
compare-and-swap only, since both threads may end an op (answer, timeout, broken pipe).
"""

from __future__ import annotations

import numpy as np
from numba import njit, types

from loadtower.agents.cql import native_kernels as k
from loadtower.agents.cql.native_kernels import (
    _atomic_add,
    _call2_i32,
    _call3_i32,
    _cas,
    _codegen,
    intrinsic,
    load,
    now_ns,
    record,
    view,
)

# -- the context array, after native_kernels' shared fields (40: its DISCARD_BEFORE) -------
# (numba caches this module's machine code with `record` inlined, keyed by THIS file: a
# change to native_kernels.record needs a change here too, or the old record stays)
FN_SEND, FN_RECV, FN_POLL, FN_ERRNO, FN_SHUTDOWN = 27, 28, 29, 30, 31
ARENA_TAIL, RECV_RUNNING, TIMEOUT_NS, RECV_SCRATCH = 32, 33, 34, 35

# -- per connection ------------------------------------------------------------------------
C_FD, C_STATE, C_GEN, C_RGEN, C_FILL, C_SKIP, C_SKIP_STREAM = 0, 1, 2, 3, 4, 5, 6
CONN_W = 8
DOWN, UP = 0, 1

# -- per op in flight (S_OP, S_INTENDED, S_SENT, S_LATE, S_STATE as the driver's sender) ---
S_CONN = 6
FREE, IN_FLIGHT, ABANDONED = 0, 1, 2  # abandoned: timed out, its stream still taken

# -- error codes, as the driver numbers them (named by native_api.error_name) -------------
ERR_WRITE, ERR_NO_HOSTS, ERR_TIMED_OUT = 1 << 24 | 9, 1 << 24 | 10, 1 << 24 | 14
SERVER = 2 << 24
OP_ERROR = 0x00
MSG_NOSIGNAL, MSG_DONTWAIT, EINTR, EAGAIN, SHUT_RDWR = 0x4000, 0x40, 4, 11, 2
POLLIN, WARNING = 1, 0x08
POLL_MS = 20
HEADER = 9


@intrinsic
def _call0_ptr(typingctx, fn):  # noqa: ANN001, ANN202
    return types.int64(types.int64), _codegen(0, k._PTR)


@intrinsic
def _call4_ssize(typingctx, fn, a, b, c, d):  # noqa: ANN001, ANN202
    return types.int64(*[types.int64] * 5), _codegen(4, k._PTR)


@njit(cache=True, nogil=True)
def _errno(ctx):  # noqa: ANN001, ANN201
    return view(_call0_ptr(ctx[FN_ERRNO]), 1)[0] & 0xFFFFFFFF


@njit(cache=True, nogil=True)
def _end(ctx, slots, index, frm, to, done, code):  # noqa: ANN001, ANN201
    """Move slot `index` from state `frm` to `to`; if it was in flight, record it."""
    slot = slots[index]
    op, intended, sent, late = slot[k.S_OP], slot[k.S_INTENDED], slot[k.S_SENT], slot[k.S_LATE]
    if _cas(slots.ctypes.data + 8 * (k.SLOT_W * index + k.S_STATE), frm, to) != frm:
        return False  # read before: once free, the sender may reuse the slot at once
    if frm == IN_FLIGHT:
        record(ctx, op, intended, sent, done, late, code)
        _atomic_add(ctx[k.CTX_ADDR] + 8 * k.COMPLETED, 1)
    return True


@njit(cache=True, nogil=True)
def _pick(conns, preferred):  # noqa: ANN001, ANN201
    """The preferred connection if up, else the next one that is, else -1."""
    n = conns.shape[0]
    base = conns.ctypes.data
    for step in range(n):
        c = (preferred + step) % n
        if load(base + 8 * (CONN_W * c + C_STATE)) == UP:
            return c
    return -1


@njit(cache=True, nogil=True)
def _write(ctx, fd, addr, length):  # noqa: ANN001, ANN201
    """Write a whole frame (a blocking socket; its send timeout bounds a stall)."""
    done = 0
    while done < length:
        n = _call4_ssize(ctx[FN_SEND], fd, addr + done, length - done, MSG_NOSIGNAL)
        if n < 0:
            if _errno(ctx) == EINTR:
                continue
            return False
        done += n
    return True


@njit(cache=True, nogil=True)
def send_loop(ctx, q_off, q_len, q_conn, q_op, q_t, slots, conns, arena):  # noqa: ANN001, ANN201
    """Send queued frames at their intended times until ctx[RUNNING] is 0. A frame lies
    whole at q_off % arena.size (absolute offsets: Python pads rather than wraps)."""
    qlen, nslots = q_off.size, ctx[k.NSLOTS]
    base = ctx[k.CTX_ADDR]
    cursor = 0
    scratch = ctx[k.SCRATCH] + 16
    arena_len = arena.size
    while load(base + 8 * k.RUNNING):
        tail = ctx[k.TAIL]
        if tail == load(base + 8 * k.HEAD):
            k._sleep_until(ctx, now_ns(ctx, scratch) + 1_000_000)
            continue
        i = tail % qlen
        now = now_ns(ctx, scratch)
        if q_t[i] > now:
            k._sleep_until(ctx, min(q_t[i], now + k.SLEEP_MAX_NS))
            continue
        if ctx[k.SENT] - load(base + 8 * k.COMPLETED) >= ctx[k.MAX_IN_FLIGHT]:
            k._sleep_until(ctx, now + k.FULL_WAIT_NS)
            continue
        late = 1 if now - q_t[i] > ctx[k.LATE_NS] else 0
        c = _pick(conns, q_conn[i])
        if c < 0:  # no node to send to: the op fails at once, as the driver's would
            record(ctx, q_op[i], q_t[i], now, now, late, ERR_NO_HOSTS)
        else:
            found = False
            for _ in range(nslots):  # abandoned slots keep their streams: look past them
                if load(slots.ctypes.data + 8 * (k.SLOT_W * cursor + k.S_STATE)) == FREE:
                    found = True
                    break
                cursor = (cursor + 1) % nslots
            if not found:
                k._sleep_until(ctx, now + k.FULL_WAIT_NS)
                continue
            slot = slots[cursor]
            slot[k.S_OP], slot[k.S_INTENDED], slot[k.S_SENT] = q_op[i], q_t[i], now
            slot[k.S_LATE], slot[S_CONN] = late, c
            _atomic_add(slots.ctypes.data + 8 * (k.SLOT_W * cursor + k.S_STATE), IN_FLIGHT)
            ctx[k.SENT] += 1
            at = q_off[i] % arena_len
            stream = cursor + 1  # the frame's bytes 2-3, big-endian
            arena[at + 2], arena[at + 3] = (stream >> 8) & 0xFF, stream & 0xFF
            fd = conns[c, C_FD]
            if not _write(ctx, fd, arena.ctypes.data + at, q_len[i]):
                _end(ctx, slots, cursor, IN_FLIGHT, FREE, now_ns(ctx, scratch), ERR_WRITE)
                # a part of a frame may be out: the connection is done for. The reading
                # thread sees it end, marks it down and fails the rest of its ops (only
                # then may Python replace it, so no op is left on a forgotten socket)
                _call2_i32(ctx[FN_SHUTDOWN], fd, SHUT_RDWR)
            cursor = (cursor + 1) % nslots
        ctx[ARENA_TAIL] = q_off[i] + q_len[i]  # the arena up to here may be refilled
        _atomic_add(base + 8 * k.TAIL, 1)
    return 0


@njit(cache=True, nogil=True)
def _be(buf, at, n):  # noqa: ANN001, ANN201
    v = 0
    for j in range(n):
        v = (v << 8) | buf[at + j]
    return v


@njit(cache=True, nogil=True)
def _answer(ctx, slots, conn, stream, opcode, code):  # noqa: ANN001, ANN201
    """An answer on stream `stream` of connection `conn`: end its op."""
    index = stream - 1
    if index < 0 or index >= slots.shape[0] or slots[index, S_CONN] != conn:
        return  # an event (stream -1), or nothing of ours
    done = now_ns(ctx, ctx[RECV_SCRATCH])
    err = SERVER | code if opcode == OP_ERROR else 0
    if not _end(ctx, slots, index, IN_FLIGHT, FREE, done, err):
        _end(ctx, slots, index, ABANDONED, FREE, done, 0)  # answered after its timeout


@njit(cache=True, nogil=True)
def _error_code(buf, pos, total):  # noqa: ANN001, ANN201
    """An ERROR frame's code, past any warnings (we never ask for tracing or payloads)."""
    at = pos + HEADER
    if buf[pos + 1] & WARNING:
        count, at = _be(buf, at, 2), at + 2
        for _ in range(count):
            if at + 2 > pos + total:
                return 0
            at += 2 + _be(buf, at, 2)
    return _be(buf, at, 4) if at + 4 <= pos + total else 0


@njit(cache=True, nogil=True)
def _parse(ctx, slots, conns, c, buf):  # noqa: ANN001, ANN201
    """End the ops of every whole frame in connection c's buffer; keep the rest."""
    fill, pos, size = conns[c, C_FILL], 0, buf.size
    while fill - pos >= HEADER:
        stream = _be(buf, pos + 2, 2)
        stream = stream - 65536 if stream >= 32768 else stream
        opcode, length = buf[pos + 4], _be(buf, pos + 5, 4)
        total = HEADER + length
        if total > size:  # bigger than the buffer (a large result): skip its body
            conns[c, C_SKIP], conns[c, C_SKIP_STREAM] = total - (fill - pos), stream
            pos = fill
            break
        if fill - pos < total:
            break
        code = _error_code(buf, pos, total) if opcode == OP_ERROR else 0
        _answer(ctx, slots, c, stream, opcode, code)
        pos += total
    rest = fill - pos
    for j in range(rest):
        buf[j] = buf[pos + j]
    conns[c, C_FILL] = rest


@njit(cache=True, nogil=True)
def _broken(ctx, slots, conns, c):  # noqa: ANN001, ANN201
    """Connection c is gone: mark it down, fail its ops in flight, free their streams."""
    _cas(conns.ctypes.data + 8 * (CONN_W * c + C_STATE), UP, DOWN)  # only this thread does
    done = now_ns(ctx, ctx[RECV_SCRATCH])
    for i in range(slots.shape[0]):
        if slots[i, S_CONN] == c:
            if not _end(ctx, slots, i, IN_FLIGHT, FREE, done, ERR_WRITE):
                _end(ctx, slots, i, ABANDONED, FREE, done, 0)
    conns[c, C_FILL] = conns[c, C_SKIP] = 0


@njit(cache=True, nogil=True)
def _read(ctx, slots, conns, c, buf):  # noqa: ANN001, ANN201
    """Read what connection c has; False when it broke."""
    fill = conns[c, C_FILL]
    n = _call4_ssize(ctx[FN_RECV], conns[c, C_FD], buf.ctypes.data + fill, buf.size - fill,
                     MSG_DONTWAIT)
    if n == 0:
        return False
    if n < 0:
        err = _errno(ctx)
        return err == EAGAIN or err == EINTR
    skip = conns[c, C_SKIP]
    if skip:
        used = min(skip, n)
        conns[c, C_SKIP] = skip - used
        if skip == used:
            _answer(ctx, slots, c, conns[c, C_SKIP_STREAM], 0x08, 0)
        for j in range(n - used):
            buf[fill + j] = buf[fill + used + j]
        n -= used
    conns[c, C_FILL] = fill + n
    _parse(ctx, slots, conns, c, buf)
    return True


@njit(cache=True, nogil=True)
def _sweep(ctx, slots, now):  # noqa: ANN001, ANN201
    """Ops unanswered for the request timeout: errors; their streams stay taken."""
    limit = now - ctx[TIMEOUT_NS]
    for i in range(slots.shape[0]):
        if slots[i, k.S_STATE] == IN_FLIGHT and slots[i, k.S_SENT] < limit:
            _end(ctx, slots, i, IN_FLIGHT, ABANDONED, now, ERR_TIMED_OUT)


@njit(cache=True, nogil=True)
def recv_loop(ctx, slots, conns, rbufs, pollfds):  # noqa: ANN001, ANN201
    """Read answers until ctx[RECV_RUNNING] is 0."""
    base = ctx[k.CTX_ADDR]
    nconns = conns.shape[0]
    words = pollfds.view(np.int32)  # struct pollfd: fd, events | revents << 16
    last_sweep = 0
    while load(base + 8 * RECV_RUNNING):
        for c in range(nconns):
            up = load(conns.ctypes.data + 8 * (CONN_W * c + C_STATE)) == UP
            if up and conns[c, C_RGEN] != conns[c, C_GEN]:  # a new connection
                conns[c, C_FILL] = conns[c, C_SKIP] = 0
                conns[c, C_RGEN] = conns[c, C_GEN]
            words[2 * c] = conns[c, C_FD] if up else -1
            words[2 * c + 1] = POLLIN
        ready = _call3_i32(ctx[FN_POLL], pollfds.ctypes.data, nconns, POLL_MS)
        if ready > 0:
            for c in range(nconns):
                revents = (words[2 * c + 1] >> 16) & 0xFFFF
                if words[2 * c] >= 0 and revents:
                    if not _read(ctx, slots, conns, c, rbufs[c]):
                        _broken(ctx, slots, conns, c)
        now = now_ns(ctx, ctx[RECV_SCRATCH])
        if now - last_sweep > 100_000_000:
            _sweep(ctx, slots, now)
            last_sweep = now
    return 0
