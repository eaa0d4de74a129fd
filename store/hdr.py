"""Vectorised codec for the agents' HDR histograms (hdrh V2 format, 1..60e6 us, 3 digits).

Decoding thousands of histograms one by one through `hdrh` is too slow for a
16-agent run, so this module decodes a whole batch at once with numpy: base64 and
zlib per histogram, then one vectorised LEB128/ZigZag pass over all payloads.
Encoding writes the exact format `hdrh.HdrHistogram.decode` reads, and the
percentile rule is hdrh's (`get_value_at_percentile`: highest equivalent value).
"""

from __future__ import annotations

import base64
import binascii
import struct
import zlib
from collections.abc import Sequence

import numpy as np
import pyhdrh  # hdrhistogram's C varint codec

LOWEST, HIGHEST, DIGITS = 1, 60_000_000, 3
SUB_HALF_MAG = 10  # 2 * 10**3 -> 2048 sub-buckets, half = 1024
SUB_HALF = 1 << SUB_HALF_MAG
BUCKETS = 16  # smallest 2048 << k above 60e6
COUNTS_LEN = (BUCKETS + 1) * SUB_HALF
_ENCODING_COOKIE = 0x1C849303 | 0x10
_COMPRESSION_COOKIE = 0x1C849304 | 0x10
_PAYLOAD_HEADER = struct.Struct(">IIIIqqd")
_EXTERNAL_HEADER = struct.Struct(">II")
PERCENTILES = (50.0, 90.0, 99.0, 99.9)
BATCH = 256


def _highest_equivalent_values() -> np.ndarray:
    idx = np.arange(COUNTS_LEN, dtype=np.int64)
    bucket = (idx >> SUB_HALF_MAG) - 1
    sub = (idx & (SUB_HALF - 1)) + SUB_HALF
    low = bucket < 0
    sub = np.where(low, sub - SUB_HALF, sub)
    bucket = np.where(low, 0, bucket)
    return (sub << bucket) + (np.int64(1) << bucket) - 1


HIGH_VALUES = _highest_equivalent_values()  # value (us) reported for each counts index


def _payload(encoded: str | bytes, b64: bool) -> bytes:
    raw = binascii.a2b_base64(encoded) if b64 else encoded
    cookie, length = _EXTERNAL_HEADER.unpack_from(raw)
    if cookie & ~0xF0 != 0x1C849304:
        raise ValueError("not an HDR histogram (bad cookie)")
    data = zlib.decompress(raw[8 : 8 + length])
    _, plen, offset, _, lowest, highest, _ = _PAYLOAD_HEADER.unpack_from(data)
    if offset or lowest != LOWEST or highest != HIGHEST:
        raise ValueError("HDR histogram with unexpected range (want 1..60e6 us, 3 digits)")
    return data[_PAYLOAD_HEADER.size : _PAYLOAD_HEADER.size + plen]


def decode_many(encoded: Sequence[str | bytes | None], b64: bool = True) -> tuple[np.ndarray, ...]:
    """Sparse counts of many histograms: (hist_no, index, count), sorted by hist then index.

    `b64=False` takes the stored form (hdrh's encoding without the base64 wrapper).
    """
    if len(encoded) > BATCH:  # small batches keep the temporaries in the CPU cache
        parts = [decode_many(encoded[i : i + BATCH], b64) for i in range(0, len(encoded), BATCH)]
        nos = [p[0] + i * BATCH for i, p in enumerate(parts)]
        return tuple(np.concatenate(x) for x in (nos, [p[1] for p in parts], [p[2] for p in parts]))
    payloads = [_payload(e, b64) if e else b"" for e in encoded]
    sizes = np.fromiter((len(p) for p in payloads), np.int64, len(payloads))
    buf = np.frombuffer(b"".join(payloads), np.uint8)
    if buf.size == 0:
        empty = np.zeros(0, np.int64)
        return empty, empty, empty
    ends = np.flatnonzero((buf & 0x80) == 0)
    starts = np.empty_like(ends)
    starts[0] = 0
    starts[1:] = ends[:-1] + 1
    pos = np.arange(buf.size, dtype=np.int64) - np.repeat(starts, ends - starts + 1)
    parts = (buf & 0x7F).astype(np.int64) << (7 * pos)
    zz = np.add.reduceat(parts, starts)
    vals = (zz >> 1) ^ -(zz & 1)
    hist_start = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    hist_no = np.searchsorted(hist_start, starts, side="right") - 1
    step = np.where(vals < 0, -vals, 1)
    excl = np.cumsum(step) - step
    first = np.searchsorted(hist_no, np.arange(len(payloads)), side="left")
    first = np.minimum(first, len(vals) - 1)
    index = excl - excl[first][hist_no]
    keep = vals > 0
    return hist_no[keep], index[keep], vals[keep]


def encode(counts: np.ndarray) -> str:
    """Encode a dense counts array (length COUNTS_LEN) as hdrh's base64 V2 text."""
    return base64.b64encode(encode_raw(counts)).decode()


def encode_raw(counts: np.ndarray) -> bytes:
    """hdrh's V2 encoding without the base64 wrapper: what the store keeps (BLOB)."""
    counts = np.ascontiguousarray(counts, dtype=np.int64)
    nz = np.flatnonzero(counts)
    limit = int(nz[-1]) + 1 if nz.size else 0
    varints = b""
    if limit:
        buf = np.zeros(limit * 9, np.uint8)
        size = pyhdrh.encode(counts.ctypes.data, limit, 8, buf.ctypes.data, buf.size)
        varints = buf[:size].tobytes()
    header = _PAYLOAD_HEADER.pack(_ENCODING_COOKIE, len(varints), 0, DIGITS, LOWEST, HIGHEST, 1.0)
    body = zlib.compress(header + varints)
    return _EXTERNAL_HEADER.pack(_COMPRESSION_COOKIE, len(body)) + body


def dense(hist_no: np.ndarray, index: np.ndarray, count: np.ndarray, groups: int) -> np.ndarray:
    """Sum sparse entries into a dense (groups, COUNTS_LEN) int64 matrix."""
    flat = np.bincount(hist_no * COUNTS_LEN + index, weights=count, minlength=groups * COUNTS_LEN)
    return flat.astype(np.int64).reshape(groups, COUNTS_LEN)


def dense_stats(mat: np.ndarray) -> np.ndarray:
    """Per row: p50, p90, p99, p99.9, max in ms (NaN when empty), as a (rows, 5) array."""
    out = np.full((mat.shape[0], len(PERCENTILES) + 1), np.nan)
    if mat.size == 0:
        return out
    cs = np.cumsum(mat, axis=1)
    total = cs[:, -1]
    ok = total > 0
    for j, p in enumerate(PERCENTILES):
        target = np.maximum((p * total / 100.0 + 0.5).astype(np.int64), 1)
        idx = np.argmax(cs >= target[:, None], axis=1)
        out[:, j] = np.where(ok, HIGH_VALUES[idx] / 1000.0, np.nan)
    last = COUNTS_LEN - 1 - np.argmax(mat[:, ::-1] > 0, axis=1)
    out[:, -1] = np.where(ok, HIGH_VALUES[last] / 1000.0, np.nan)
    return out


def sparse_stats(hist_no: np.ndarray, index: np.ndarray, count: np.ndarray, n: int) -> np.ndarray:
    """Like dense_stats for n sparse histograms (entries sorted by hist then index)."""
    out = np.full((n, len(PERCENTILES) + 1), np.nan)
    if count.size == 0:
        return out
    total = np.bincount(hist_no, weights=count, minlength=n).astype(np.int64)
    cs = np.cumsum(count)
    before = np.concatenate(([0], np.cumsum(total)[:-1]))
    ok = total > 0
    for j, p in enumerate(PERCENTILES):
        target = before + np.maximum((p * total / 100.0 + 0.5).astype(np.int64), 1)
        pos = np.minimum(np.searchsorted(cs, target, side="left"), cs.size - 1)
        out[:, j] = np.where(ok, HIGH_VALUES[index[pos]] / 1000.0, np.nan)
    last = np.minimum(np.searchsorted(cs, before + total, side="left"), cs.size - 1)
    out[:, -1] = np.where(ok, HIGH_VALUES[index[last]] / 1000.0, np.nan)
    return out
