"""The native hot loop of the acsylla path: sending and measuring without Python per op.

`send_loop` runs (GIL released) on a thread of its own: it takes bound statements from
a queue the engine fills ahead of time, waits for each op's intended start, hands it
to the C++ driver and registers `on_done` as the future's callback. `on_done` runs on
the driver's I/O thread: it reads the clock, takes the error code, records service and
response time into the HDR counts of the second the op completed in, and frees the
future. Python only fills the queue a few times a second and reads finished seconds.

The C++ driver's functions are called through addresses kept in the context array
(nothing process-specific is compiled in, so numba caches the machine code). Counters
that two threads may touch are updated atomically.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from llvmlite import ir  # type: ignore[import-untyped]  # llvmlite ships no type stubs
from numba import carray, cfunc, njit, types
from numba.extending import intrinsic as _numba_intrinsic

from loadtower.protocol.hdr_format import HIGHEST, SUB_HALF, SUB_HALF_MAG

# numba's stub types a call of an intrinsic with its typing function's signature
# (typingctx first) and as never returning; inside @njit code it is called without
# typingctx and returns a value. The same decorator, typed so its results are Any.
intrinsic: Callable[[Callable[..., Any]], Any] = _numba_intrinsic

# -- the context array: function addresses, then shared state -------------------------
FN_CLOCK, FN_SLEEP, FN_EXECUTE, FN_EXECUTE_BATCH = 0, 1, 2, 3
FN_STMT_FREE, FN_BATCH_FREE, FN_SET_CALLBACK, FN_ERROR_CODE, FN_FUTURE_FREE = 4, 5, 6, 7, 8
CALLBACK, SESSION, RUNNING, HEAD, TAIL, SENT, COMPLETED = 9, 10, 11, 12, 13, 14, 15
MAX_IN_FLIGHT, WALL_OFFSET, LATE_NS, COUNTS, STATS, SCRATCH = 16, 17, 18, 19, 20, 21
NOPS, RING, HIST_LEN, NSLOTS, CTX_ADDR = 22, 23, 24, 25, 26
CTX_LEN = 48  # 27..39 are the wire sender's (wire_kernels.py)
DISCARD_BEFORE = 40  # ops intended before this (monotonic ns) were given up: not recorded

# -- one slot per op in flight ---------------------------------------------------------
S_CTX, S_OP, S_INTENDED, S_SENT, S_LATE, S_STATE, S_TS = 0, 1, 2, 3, 4, 5, 6  # S_TS: 2 words
SLOT_W = 8

# -- per second (ring slot) and op: counters, then (error code, count) pairs ----------
# ST_FIRST: FIRST_BASE - the earliest intended start (wall ns), kept by atomic max so a
# cleared row (0) needs no sentinel; ST_LAST: the latest completion (wall ns)
ST_OPS, ST_LATE, ST_SECOND, ST_FIRST, ST_LAST, ST_ERR = 0, 1, 2, 3, 4, 5
ERR_PAIRS = 8
STATS_W = ST_ERR + 2 * ERR_PAIRS
FIRST_BASE = 1 << 62

HIGHEST_US = HIGHEST
SUB_BITS = SUB_HALF_MAG + 1  # 3 significant digits: 2048 sub-buckets, lowest value 1
HALF = SUB_HALF
CLOCK_MONOTONIC, TIMER_ABSTIME = 1, 1
SLEEP_MAX_NS = 20_000_000  # re-check `running` at least this often
FULL_WAIT_NS = 50_000  # all slots in flight: look again after this


def _codegen(nargs: int, returns: ir.Type | None):  # noqa: ANN202
    """Code calling the C function at the first argument's address with the others."""
    i64 = ir.IntType(64)

    def codegen(context, builder, signature, llargs):  # noqa: ANN001, ANN202
        fnty = ir.FunctionType(returns or ir.VoidType(), [i64] * nargs)
        out = builder.call(builder.inttoptr(llargs[0], fnty.as_pointer()), llargs[1:])
        if returns is None:
            return context.get_dummy_value()
        return builder.sext(out, i64) if returns.width < 64 else out

    return codegen


_I32, _PTR = ir.IntType(32), ir.IntType(64)
_i64 = types.int64


@intrinsic
def _call1_void(typingctx, fn, a):  # noqa: ANN001, ANN202
    return types.void(_i64, _i64), _codegen(1, None)


@intrinsic
def _call1_i32(typingctx, fn, a):  # noqa: ANN001, ANN202
    return _i64(_i64, _i64), _codegen(1, _I32)


@intrinsic
def _call2_i32(typingctx, fn, a, b):  # noqa: ANN001, ANN202
    return _i64(_i64, _i64, _i64), _codegen(2, _I32)


@intrinsic
def _call2_ptr(typingctx, fn, a, b):  # noqa: ANN001, ANN202
    return _i64(_i64, _i64, _i64), _codegen(2, _PTR)


@intrinsic
def _call3_i32(typingctx, fn, a, b, c):  # noqa: ANN001, ANN202
    return _i64(_i64, _i64, _i64, _i64), _codegen(3, _I32)


@intrinsic
def _call4_i32(typingctx, fn, a, b, c, d):  # noqa: ANN001, ANN202
    return _i64(_i64, _i64, _i64, _i64, _i64), _codegen(4, _I32)


@intrinsic
def _atomic_add(typingctx, addr, value):  # noqa: ANN001, ANN202
    def codegen(context, builder, signature, args):  # noqa: ANN001, ANN202
        ptr = builder.inttoptr(args[0], ir.IntType(64).as_pointer())
        return builder.atomic_rmw("add", ptr, args[1], "seq_cst")

    return types.int64(types.int64, types.int64), codegen


@intrinsic
def _atomic_max(typingctx, addr, value):  # noqa: ANN001, ANN202
    def codegen(context, builder, signature, args):  # noqa: ANN001, ANN202
        ptr = builder.inttoptr(args[0], ir.IntType(64).as_pointer())
        return builder.atomic_rmw("max", ptr, args[1], "seq_cst")

    return types.int64(types.int64, types.int64), codegen


@intrinsic
def _cas(typingctx, addr, expected, value):  # noqa: ANN001, ANN202
    """Compare-and-swap; returns the value found."""

    def codegen(context, builder, signature, args):  # noqa: ANN001, ANN202
        ptr = builder.inttoptr(args[0], ir.IntType(64).as_pointer())
        pair = builder.cmpxchg(ptr, args[1], args[2], "seq_cst", "seq_cst")
        return builder.extract_value(pair, 0)

    return types.int64(types.int64, types.int64, types.int64), codegen


@intrinsic
def _words(typingctx, addr, count):  # noqa: ANN001, ANN202
    """An int64 array view of `count` words at an address."""
    from numba.core import cgutils

    def codegen(context, builder, signature, args):  # noqa: ANN001, ANN202
        return builder.inttoptr(args[0], cgutils.voidptr_t)

    return types.voidptr(types.int64, types.int64), codegen


@njit(cache=True, nogil=True)
def view(addr, count):  # noqa: ANN001, ANN201
    return carray(_words(addr, count), (count,), np.int64)


@njit(cache=True, nogil=True)
def load(addr):  # noqa: ANN001, ANN201
    """An atomic read of the word at `addr` (a fresh load: another thread writes it)."""
    return _atomic_add(addr, 0)


@njit(cache=True, nogil=True)
def hdr_index(us):  # noqa: ANN001, ANN201
    """The counts index of a value in HdrHistogram(1, 60e6, 3), as hdrh lays them out."""
    v = max(1, min(us, HIGHEST_US))
    bucket, rest = 0, (v | (2 * HALF - 1)) >> SUB_BITS
    while rest:
        rest >>= 1
        bucket += 1
    return ((bucket + 1) << (SUB_BITS - 1)) + (v >> bucket) - HALF


@njit(cache=True, nogil=True)
def now_ns(ctx, scratch):  # noqa: ANN001, ANN201
    """CLOCK_MONOTONIC in ns, through a 2-word timespec at address `scratch`."""
    _call2_i32(ctx[FN_CLOCK], CLOCK_MONOTONIC, scratch)
    ts = view(scratch, 2)
    return ts[0] * 1_000_000_000 + ts[1]


@njit(cache=True, nogil=True)
def _sleep_until(ctx, t):  # noqa: ANN001, ANN201
    ts = view(ctx[SCRATCH], 2)
    ts[0], ts[1] = t // 1_000_000_000, t % 1_000_000_000
    _call4_i32(ctx[FN_SLEEP], CLOCK_MONOTONIC, TIMER_ABSTIME, ctx[SCRATCH], 0)


@njit(cache=True, nogil=True)
def record(ctx, op, intended, sent, done, late, code):  # noqa: ANN001, ANN201
    """Count one finished op into the ring slot of the (wall-clock) second it completed
    in; an op its phase's drain gave up on (intended before DISCARD_BEFORE) is not."""
    if intended < load(ctx[CTX_ADDR] + 8 * DISCARD_BEFORE):
        return
    offset = ctx[WALL_OFFSET]
    second = (done + offset) // 1_000_000_000
    ring, nops, width = ctx[RING], ctx[NOPS], ctx[HIST_LEN]
    row = (second % ring) * nops + op
    stats = ctx[STATS] + 8 * row * STATS_W
    view(stats, STATS_W)[ST_SECOND] = second
    _atomic_max(stats + 8 * ST_FIRST, FIRST_BASE - (intended + offset))
    _atomic_max(stats + 8 * ST_LAST, done + offset)
    _atomic_add(stats + 8 * ST_OPS, 1)
    if late:
        _atomic_add(stats + 8 * ST_LATE, 1)
    if code != 0:
        for p in range(ERR_PAIRS):
            at = stats + 8 * (ST_ERR + 2 * p)
            found = _cas(at, 0, code)
            if found == 0 or found == code or p == ERR_PAIRS - 1:
                _atomic_add(at + 8, 1)  # the last pair also takes any further classes
                return
        return
    counts = ctx[COUNTS] + 8 * row * 2 * width
    _atomic_add(counts + 8 * hdr_index((done - sent) // 1000), 1)
    _atomic_add(counts + 8 * (width + hdr_index((done - intended) // 1000)), 1)


@njit(cache=True, nogil=True)
def _finish(future, slot_addr):  # noqa: ANN001, ANN201
    slot = view(slot_addr, SLOT_W)
    ctx = view(slot[S_CTX], CTX_LEN)
    done = now_ns(ctx, slot_addr + 8 * S_TS)
    code = _call1_i32(ctx[FN_ERROR_CODE], future)
    record(ctx, slot[S_OP], slot[S_INTENDED], slot[S_SENT], done, slot[S_LATE], code)
    _call1_void(ctx[FN_FUTURE_FREE], future)
    _atomic_add(slot_addr + 8 * S_STATE, -1)  # the slot is free again
    _atomic_add(ctx[CTX_ADDR] + 8 * COMPLETED, 1)


@cfunc(types.void(types.int64, types.int64), cache=True, nopython=True)  # type: ignore[call-arg]  # numba's stub omits the nopython option cfunc accepts
def on_done(future, slot_addr):  # noqa: ANN001, ANN201
    """CassFutureCallback: (CassFuture*, void* data = the op's slot)."""
    _finish(future, slot_addr)


@njit(cache=True, nogil=True)
def send_loop(ctx, q_stmt, q_kind, q_op, q_t, slots):  # noqa: ANN001, ANN201
    """Send queued ops at their intended times until ctx[RUNNING] is 0."""
    qlen, nslots = q_stmt.size, ctx[NSLOTS]
    base = ctx[CTX_ADDR]
    cursor = 0
    scratch = ctx[SCRATCH] + 16
    slots_addr = slots.ctypes.data
    while load(base + 8 * RUNNING):
        tail = ctx[TAIL]
        if tail == load(base + 8 * HEAD):
            _sleep_until(ctx, now_ns(ctx, scratch) + 1_000_000)
            continue
        i = tail % qlen
        now = now_ns(ctx, scratch)
        if q_t[i] > now:
            _sleep_until(ctx, min(q_t[i], now + SLEEP_MAX_NS))
            continue
        if ctx[SENT] - load(base + 8 * COMPLETED) >= ctx[MAX_IN_FLIGHT]:
            _sleep_until(ctx, now + FULL_WAIT_NS)
            continue
        while load(slots_addr + 8 * (SLOT_W * cursor + S_STATE)) != 0:
            cursor = (cursor + 1) % nslots
        slot = slots[cursor]
        slot[S_OP], slot[S_INTENDED], slot[S_SENT] = q_op[i], q_t[i], now
        slot[S_LATE] = 1 if now - q_t[i] > ctx[LATE_NS] else 0
        slot[S_STATE] = 1
        stmt = q_stmt[i]
        if q_kind[i] == 0:
            future = _call2_ptr(ctx[FN_EXECUTE], ctx[SESSION], stmt)
            _call1_void(ctx[FN_STMT_FREE], stmt)
        else:
            future = _call2_ptr(ctx[FN_EXECUTE_BATCH], ctx[SESSION], stmt)
            _call1_void(ctx[FN_BATCH_FREE], stmt)
        q_stmt[i] = 0
        ctx[SENT] += 1
        _atomic_add(base + 8 * TAIL, 1)
        _call3_i32(ctx[FN_SET_CALLBACK], future, ctx[CALLBACK], slots_addr + 8 * SLOT_W * cursor)
        cursor = (cursor + 1) % nslots
    return 0
