"""Compiled (numba) loops over HdrHistogram V2 varint payloads: the store's hot path.

A 16-agent run sends 384 histograms a second (8 ops: service, response and, in the
open model, lateness); every one is decoded, merged into three rollup levels and, once
per second and op, re-encoded. Done in Python or through numpy temporaries this costs
far more than appending the rows; these loops touch each varint byte once. Payloads
are V2's ZigZag LEB128 counts where a negative value is a run of empty buckets (see
hdr.py for the envelope). Histograms are rows of int64 count matrices of width
hdr.COUNTS_LEN. `decode_b64_sparse` reads a batch of the agents' base64 texts into
sparse counts in one pass, for the live view and the lateness check.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
from numba import njit

from loadtower.protocol.hdr_format import DIGITS, HIGHEST, LOWEST
from loadtower.store.hdr import PERCENTILES as _PERCENTILES

PERCENTILES = np.array(_PERCENTILES)

I64 = npt.NDArray[np.int64]
U8 = npt.NDArray[np.uint8]
F64 = npt.NDArray[np.float64]


HEADER = 40  # uncompressed V2: cookie, payload length, offset, digits, lowest, highest, ratio


@njit(cache=True, nogil=True)
def _be(buf: U8, pos: int, size: int) -> np.int64:
    value = np.int64(0)
    for i in range(size):
        value = (value << 8) | np.int64(buf[pos + i])
    return value


@njit(cache=True, nogil=True)
def decode_sparse(
    buf: U8,
    starts: I64,
    ends: I64,
    lowest: int,
    highest: int,
    limit: int,
    out_idx: npt.NDArray[np.int32] | I64,
    out_cnt: I64,
    out_off: I64,
) -> int:
    """Decode uncompressed V2 encodings buf[starts[h]:ends[h]] into (index, count) pairs of
    non-empty buckets; histogram h's land in out_idx/out_cnt[out_off[h]:out_off[h + 1]], in
    index order. An empty range is an empty histogram. Returns the number of pairs, or
    -(h + 1) for the first histogram h whose header is not V2 over [lowest, highest] or
    whose counts run past bucket `limit` (out_idx/out_cnt hold at least limit + 1)."""
    # numba types these int64; mypy sees numpy scalars mixed with ints
    n: int | np.integer[Any] = 0
    index: int | np.integer[Any]
    for h in range(starts.size):
        out_off[h] = n
        pos, end, index = starts[h], ends[h], 0
        if pos == end:
            continue
        if (
            end - pos < HEADER
            or (_be(buf, pos, 4) & ~0xF0) != 0x1C849303
            or _be(buf, pos + 8, 4) != 0
            or _be(buf, pos + 12, 4) != DIGITS
            or _be(buf, pos + 16, 8) != lowest
            or _be(buf, pos + 24, 8) != highest
            or pos + HEADER + _be(buf, pos + 4, 4) > end
        ):
            return -(h + 1)
        end = pos + HEADER + _be(buf, pos + 4, 4)
        pos += HEADER
        while pos < end:
            b = np.int64(buf[pos])
            pos += 1
            value = b
            if b >= 0x80:  # a multi-byte varint (one byte holds counts up to 63)
                value, shift = b & 0x7F, 7
                while pos < end:
                    b = np.int64(buf[pos])
                    pos += 1
                    value |= (b & 0x7F) << shift
                    if b < 0x80:
                        break
                    shift += 7
            value = (value >> 1) ^ -(value & 1)
            # branch-free: a count is written always and kept only when positive; a
            # negative value skips that many empty buckets, anything else one bucket
            out_idx[n] = index
            out_cnt[n] = value
            n += value > 0
            index += -value if value < 0 else 1
            if index > limit:  # past the last bucket: malformed, and unsafe to go on
                return -(h + 1)
    out_off[starts.size] = n
    return int(n)  # a no-op in numba (int64 either way)


@njit(cache=True, nogil=True)
def add_pairs(dense: I64, idx: npt.NDArray[Any], cnt: I64) -> None:
    """dense[idx[i]] += cnt[i] for every pair (an index may repeat: many histograms'
    buckets added into one counts array)."""
    for i in range(idx.size):
        dense[idx[i]] += cnt[i]


@njit(cache=True, nogil=True)
def sparse_stats(
    idx: I64, cnt: I64, off: I64, first: int, step: int, high_values: I64, stats: F64
) -> None:
    """For histograms first, first + step, ...: p50, p90, p99, p99.9 and max in ms into
    stats[0], stats[1], ... (hdrh's percentile rule; NaN when empty)."""
    for s in range(stats.shape[0]):
        h = first + s * step
        lo, hi = off[h], off[h + 1]
        total = np.int64(0)
        for i in range(lo, hi):
            total += cnt[i]
        if total == 0:
            stats[s, :] = np.nan
            continue
        targets = _targets(total, PERCENTILES)
        j, seen = 0, np.int64(0)
        for i in range(lo, hi):
            seen += cnt[i]
            while j < targets.size and seen >= targets[j]:
                stats[s, j] = high_values[idx[i]] / 1000.0
                j += 1
            if j == targets.size:
                break
        stats[s, PERCENTILES.size] = high_values[idx[hi - 1]] / 1000.0


@njit(cache=True, nogil=True)
def _targets(total: np.int64, percentiles: F64) -> I64:
    """The cumulative counts at which each percentile is reached (hdrh's rounding)."""
    out = np.empty(percentiles.size, np.int64)
    for j in range(percentiles.size):
        out[j] = max(np.int64(percentiles[j] * total / 100.0 + 0.5), np.int64(1))
    return out


@njit(cache=True, nogil=True)
def _put_varint(out: U8, n: int, value: int | np.integer[Any]) -> int:
    v = (value << 1) ^ (value >> 63)  # ZigZag
    while v >= 0x80:
        out[n] = (v & 0x7F) | 0x80
        v >>= 7
        n += 1
    out[n] = v
    return n + 1


@njit(cache=True, nogil=True)
def _row_stats(
    mat: I64, r: int, k: int, first: int, last: int, high_values: I64, percentiles: F64, out: F64
) -> bool:
    """Percentiles of mat[r, k] (its non-empty buckets within first..last) in ms into
    out[:percentiles.size] and its maximum into out[percentiles.size] when out has room
    (hdrh's rule: the highest equivalent value, as get_value_at_percentile gives); False,
    with out untouched, when the row is empty."""
    total = np.int64(0)
    for x in range(first, last + 1):
        total += mat[r, k, x]
    if total == 0:
        return False
    targets = _targets(total, percentiles)
    j, seen = 0, np.int64(0)
    for x in range(first, last + 1):
        seen += mat[r, k, x]
        while j < targets.size and seen >= targets[j]:
            out[j] = high_values[x] / 1000.0
            j += 1
        if j == targets.size:
            break
    if out.size > percentiles.size:
        while mat[r, k, last] == 0:
            last -= 1
        out[percentiles.size] = high_values[last] / 1000.0
    return True


@njit(cache=True, nogil=True)
def encode_rows(
    mat: I64,
    rows: I64,
    lo: I64,
    hi: I64,
    high_values: I64,
    out: U8,
    out_off: I64,
    stats: F64,
    late_pcts: F64,
    late_stats: F64,
) -> int:
    """V2 payloads of mat[rows[i], k] for each of its kinds (K = mat.shape[1]) into
    out[out_off[K * i + k]:out_off[K * i + k + 1]], the response (k = 1) percentiles of
    each row into stats[i] (NaN when empty) and, when there is a lateness kind (k = 2),
    its `late_pcts` into late_stats[i] (0 when empty, as hdrh gives for an empty
    histogram). lo[r, k]..hi[r, k] bounds the non-empty buckets of mat[r, k]."""
    kinds = mat.shape[1]
    n = 0
    for i in range(rows.size):
        r = rows[i]
        for k in range(kinds):
            out_off[kinds * i + k] = n
            first, last = lo[r, k], hi[r, k]
            if last < first:
                continue
            if first > 0:
                n = _put_varint(out, n, -first if first > 1 else 0)
            zeros = np.int64(0)
            for x in range(first, last + 1):
                c = mat[r, k, x]
                if c == 0:
                    zeros += 1
                    continue
                if zeros:
                    n = _put_varint(out, n, -zeros if zeros > 1 else 0)
                    zeros = np.int64(0)
                n = _put_varint(out, n, c)
        out_off[kinds * i + kinds] = n
        if not _row_stats(mat, r, 1, lo[r, 1], hi[r, 1], high_values, PERCENTILES, stats[i]):
            stats[i, :] = np.nan
        if kinds > 2 and not _row_stats(
            mat, r, 2, lo[r, 2], hi[r, 2], high_values, late_pcts, late_stats[i]
        ):
            late_stats[i, :] = 0.0
    return n


@njit(cache=True, nogil=True)
def clear_rows(mat: I64, rows: I64, lo: I64, hi: I64, empty_lo: int, empty_hi: int) -> None:
    """Zero the used ranges of rows (freed for reuse), every kind, and reset their [lo, hi]."""
    for r in rows:
        for k in range(mat.shape[1]):
            if hi[r, k] >= lo[r, k]:
                mat[r, k, lo[r, k] : hi[r, k] + 1] = 0
            lo[r, k] = empty_lo
            hi[r, k] = empty_hi


def _b64_table() -> U8:
    table = np.full(256, 255, np.uint8)
    alphabet = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
    for value, char in enumerate(alphabet):
        table[char] = value
    return table


B64 = _b64_table()


@njit(cache=True, nogil=True)
def b64_decode(text: U8, start: int, end: int, out: U8) -> int:
    """Base64 text[start:end] (ASCII bytes, '=' padded) into out; byte count, or -1.

    Whole groups of four characters of the alphabet go three bytes at a time; the first
    group with anything else ('=', a bad character, the end) and the rest go character
    by character (what the whole text gave that way before: a group leaves no bits)."""
    n, i = 0, start
    while i + 4 <= end:
        a, b, c, d = B64[text[i]], B64[text[i + 1]], B64[text[i + 2]], B64[text[i + 3]]
        if (a | b | c | d) & 0xC0:  # 255: '=' or not of the alphabet
            break
        out[n] = ((a << 2) | (b >> 4)) & 0xFF
        out[n + 1] = (((b & 0xF) << 4) | (c >> 2)) & 0xFF
        out[n + 2] = (((c & 0x3) << 6) | d) & 0xFF
        n += 3
        i += 4
    acc, bits = np.int64(0), 0
    for j in range(i, end):
        ch = text[j]
        if ch == 61:  # '=': padding, the end
            break
        v = B64[ch]
        if v == 255:
            return -1
        acc = ((acc << 6) | v) & 0xFFFFFF
        bits += 6
        if bits >= 8:
            bits -= 8
            out[n] = (acc >> bits) & 0xFF
            n += 1
    return n


@njit(cache=True, nogil=True)
def _widen(lo: I64, hi: I64, r: int, k: int, a: int, b: int) -> None:
    if a < lo[r, k]:
        lo[r, k] = a
    if b > hi[r, k]:
        hi[r, k] = b


@njit(cache=True, nogil=True)
def ingest(
    text: U8,
    starts: I64,
    ends: I64,
    kind: int,
    rows: I64,
    m0: I64,
    m1: I64,
    m2: I64,
    lo0: I64,
    hi0: I64,
    lo1: I64,
    hi1: I64,
    lo2: I64,
    hi2: I64,
    high_values: I64,
    stats: npt.NDArray[Any],  # float64 (and bad: bool_); Any as rollups passes m0..hi2 as
    bad: npt.NDArray[Any],  # one *list, which mypy maps onto every later parameter too
) -> int:
    """The store's hot path: each histogram's text is read once.

    Histogram h is base64 text[starts[h]:ends[h]] of an uncompressed V2 encoding; with
    K = m0.shape[1] kinds it is kind h % K (0 service, 1 response, 2 lateness) of item
    h // K. The ones of `kind` are added to rows rows[h // K, l] of the three levels'
    count matrices m0..m2 (and their per-row, per-kind [lo, hi] ranges); the responses'
    percentiles go to stats[h // K]. An empty text is an empty histogram (an item
    without lateness). A malformed histogram is left out and flagged in bad[h]. The
    kinds touch disjoint memory, so one thread (nogil) can take each.
    """
    kinds = m0.shape[1]
    limit = high_values.size  # one past the last bucket: a full histogram ends there
    idx = np.empty(limit + 1, np.int64)
    cnt = np.empty(limit + 1, np.int64)
    one = np.zeros(2, np.int64)
    longest = 0
    for h in range(kind, starts.size, kinds):
        longest = max(longest, ends[h] - starts[h])
    raw = np.empty(longest // 4 * 3 + 3, np.uint8)
    span = np.zeros(1, np.int64)
    size = np.zeros(1, np.int64)
    for h in range(kind, starts.size, kinds):
        item = h // kinds
        if starts[h] == ends[h]:
            if kind == 1:
                stats[item, :] = np.nan
            continue
        size[0] = b64_decode(text, starts[h], ends[h], raw)
        n = -1
        if size[0] >= 0:
            n = decode_sparse(raw, span, size, LOWEST, HIGHEST, limit, idx, cnt, one)
        if n < 0:  # nothing of it was added
            bad[h] = True
            if kind == 1:
                stats[item, :] = np.nan
            continue
        r0, r1, r2 = rows[item, 0], rows[item, 1], rows[item, 2]
        for i in range(n):
            x, c = idx[i], cnt[i]
            m0[r0, kind, x] += c
            m1[r1, kind, x] += c
            m2[r2, kind, x] += c
        if n:
            _widen(lo0, hi0, r0, kind, idx[0], idx[n - 1])
            _widen(lo1, hi1, r1, kind, idx[0], idx[n - 1])
            _widen(lo2, hi2, r2, kind, idx[0], idx[n - 1])
        if kind == 1:
            sparse_stats(idx, cnt, one, 0, 1, high_values, stats[item : item + 1])  # one: [0, n]
    return 0


@njit(cache=True, nogil=True)
def decode_b64_sparse(
    text: U8,
    starts: I64,
    ends: I64,
    lowest: int,
    highest: int,
    limit: int,
    out_idx: npt.NDArray[Any],
    out_cnt: I64,
    out_off: I64,
    raw: U8,
) -> int:
    """Histogram h is base64 text[starts[h]:ends[h]] of an uncompressed V2 encoding (an
    empty range: an empty histogram); its non-empty buckets land in
    out_idx/out_cnt[out_off[h]:out_off[h + 1]], in index order. `raw` holds the longest
    one decoded; out_idx/out_cnt hold one more pair than all of them have bytes decoded.
    Returns the number of pairs, or -(h + 1) for the first histogram h that is not
    base64 of V2 over [lowest, highest]."""
    span = np.zeros(1, np.int64)
    size = np.zeros(1, np.int64)
    one = np.zeros(2, np.int64)
    n = 0
    for h in range(starts.size):
        out_off[h] = n
        if starts[h] == ends[h]:
            continue
        size[0] = b64_decode(text, starts[h], ends[h], raw)
        if size[0] < 0:
            return -(h + 1)
        got = decode_sparse(raw, span, size, lowest, highest, limit, out_idx[n:], out_cnt[n:], one)
        if got < 0:
            return -(h + 1)
        n += got
    out_off[starts.size] = n
    return n
