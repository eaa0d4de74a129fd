"""Codec for the agents' and the store's HDR histograms (V2 counts, 1..60e6 us, 3 digits).

Three envelopes around the same V2 varint counts payload are understood:
- hdrh's compressed V2 encoding (zlib; what `HdrHistogram.encode` writes), base64 or not;
- the uncompressed V2 encoding (40-byte header + payload; HdrHistogram's
  `encodeIntoByteBuffer`): what the agents send, base64, so the store need not inflate;
- the store's BLOB: b"LTZ1", the uncompressed length (4 bytes, big-endian), then a zstd
  frame of the uncompressed V2 encoding (zstd is several times cheaper than zlib here).
The varint loops are compiled (hdr_kernels.py); a batch of the agents' base64 texts is
read in one compiled pass, base64 included. The percentile rule is hdrh's
(`get_value_at_percentile`: highest equivalent value).
"""

from __future__ import annotations

import base64
import binascii
import struct
import zlib
from collections.abc import Sequence
from types import ModuleType
from typing import cast

import numpy as np
import pyarrow as pa
from hdrh.histogram import HdrHistogram

from loadtower.protocol.hdr_encoding import new_hist

# the HDR format's names, re-exported for the store's modules (protocol/hdr_format.py)
from loadtower.protocol.hdr_format import COUNTS_LEN as COUNTS_LEN
from loadtower.protocol.hdr_format import DIGITS as DIGITS
from loadtower.protocol.hdr_format import ENCODING_COOKIE as _ENCODING_COOKIE
from loadtower.protocol.hdr_format import HIGHEST as HIGHEST
from loadtower.protocol.hdr_format import LOWEST as LOWEST
from loadtower.protocol.hdr_format import PAYLOAD_HEADER as PAYLOAD_HEADER
from loadtower.protocol.hdr_format import SUB_HALF as SUB_HALF
from loadtower.protocol.hdr_format import SUB_HALF_MAG as SUB_HALF_MAG
from loadtower.protocol.hdr_format import pack_header as pack_header

_COMPRESSION_COOKIE = 0x1C849304 | 0x10
_EXTERNAL_HEADER = struct.Struct(">II")
STORED_MAGIC = b"LTZ1"
_STORED_HEADER = struct.Struct(">4sI")
_ZSTD = pa.Codec("zstd", compression_level=1)
PERCENTILES = (50.0, 90.0, 99.0, 99.9)
# how the agents' form begins: base64 of the uncompressed V2 cookie (8-byte word flag)
AGENTS_B64_PREFIX = "HISTEw"


def _bucket_bounds() -> tuple[np.ndarray, np.ndarray]:
    """Lowest and highest equivalent value (us) of each counts index (hdrh's rules)."""
    idx = np.arange(COUNTS_LEN, dtype=np.int64)
    bucket = (idx >> SUB_HALF_MAG) - 1
    sub = (idx & (SUB_HALF - 1)) + SUB_HALF
    low = bucket < 0
    sub = np.where(low, sub - SUB_HALF, sub)
    bucket = np.where(low, 0, bucket)
    lowest = sub << bucket
    return lowest, lowest + (np.int64(1) << bucket) - 1


LOW_VALUES, HIGH_VALUES = _bucket_bounds()  # HIGH_VALUES: the value reported per index


V2_COOKIE_BYTES = struct.pack(">I", _ENCODING_COOKIE)


V2_FIELDS = struct.pack(">IIqq", 0, DIGITS, LOWEST, HIGHEST)  # header bytes 8..32


def v2(encoded: str | bytes, b64: bool = True) -> bytes:
    """Any of the three envelopes as the uncompressed V2 encoding (header + payload).

    Raises ValueError when it is not an HDR histogram over the agent protocol's range.
    """
    try:
        raw = binascii.a2b_base64(encoded) if b64 else bytes(cast(bytes, encoded))  # raw: BLOBs
        if raw[:4] == V2_COOKIE_BYTES and raw[8:32] == V2_FIELDS:  # the agents' form
            if PAYLOAD_HEADER.size + int.from_bytes(raw[4:8], "big") <= len(raw):
                return raw
        if raw[:4] == STORED_MAGIC:
            _, size = _STORED_HEADER.unpack_from(raw)
            raw = _ZSTD.decompress(raw[_STORED_HEADER.size :], size, asbytes=True)
        elif raw[:4] != V2_COOKIE_BYTES:
            cookie, length = _EXTERNAL_HEADER.unpack_from(raw)
            if cookie & ~0xF0 == 0x1C849304:
                raw = zlib.decompress(raw[8 : 8 + length])
    except (binascii.Error, struct.error, zlib.error, pa.ArrowException, TypeError) as exc:
        raise ValueError(f"not an HDR histogram ({type(exc).__name__}: {exc})") from None
    if len(raw) < PAYLOAD_HEADER.size or (int.from_bytes(raw[:4], "big") & ~0xF0) != 0x1C849303:
        raise ValueError("not an HDR histogram (bad cookie)")
    if raw[8:32] != V2_FIELDS:
        raise ValueError("HDR histogram with unexpected range (want 1..60e6 us, 3 digits)")
    if PAYLOAD_HEADER.size + int.from_bytes(raw[4:8], "big") > len(raw):
        raise ValueError("HDR histogram payload is truncated")
    return raw


def _kernels() -> ModuleType:
    """The compiled loops (hdr_kernels.py), imported when first needed: numba's import
    is not paid by the commands that never decode a histogram."""
    from loadtower.store import hdr_kernels

    return hdr_kernels


def decode_v2_batch(encodings: Sequence[bytes]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sparse counts of uncompressed V2 encodings (b"" = empty): (index, count, offsets);
    histogram h's non-empty buckets are index/count[offsets[h]:offsets[h + 1]]."""
    sizes = np.fromiter((len(p) for p in encodings), np.int64, len(encodings))
    ends = np.cumsum(sizes)
    buf = np.frombuffer(b"".join(encodings), np.uint8)
    idx = np.empty(buf.size + 1, np.int32)
    cnt = np.empty(buf.size + 1, np.int64)
    off = np.zeros(len(encodings) + 1, np.int64)
    kern = _kernels()
    n = kern.decode_sparse(buf, ends - sizes, ends, LOWEST, HIGHEST, COUNTS_LEN, idx, cnt, off)
    if n < 0:
        raise ValueError(
            f"histogram {-n - 1} of the batch is not an HDR V2 histogram over "
            f"{LOWEST}..{HIGHEST} us with {DIGITS} digits"
        )
    return idx[:n], cnt[:n], off


def _agents_batch(encoded: Sequence[str | bytes | None]) -> tuple[np.ndarray, ...] | None:
    """`decode_v2_batch` of histograms that are all in the agents' form (base64 text of
    the uncompressed V2 encoding) or empty, read from their text in one compiled pass;
    None for any other batch, or one the loop refuses (the Python path then names the
    bad histogram as it always has)."""
    for e in encoded:
        if e and not (isinstance(e, str) and e.startswith(AGENTS_B64_PREFIX)):
            return None
    texts = [cast(str, e) or "" for e in encoded]
    try:
        buf = np.frombuffer("".join(texts).encode("ascii"), np.uint8)
    except UnicodeEncodeError:
        return None
    sizes = np.fromiter(map(len, texts), np.int64, len(texts))
    if (sizes & 3).any():  # not padded as the agents' base64 is: the Python path decides
        return None
    ends = np.cumsum(sizes)
    room = buf.size // 4 * 3 + 4  # at most one pair per decoded byte, and one more
    idx, cnt = np.empty(room, np.int32), np.empty(room, np.int64)
    off = np.zeros(len(texts) + 1, np.int64)
    raw = np.empty(int(sizes.max(initial=0)) // 4 * 3 + 3, np.uint8)
    kern = _kernels()
    n = kern.decode_b64_sparse(buf, ends - sizes, ends, LOWEST, HIGHEST, COUNTS_LEN, idx, cnt,
                               off, raw)  # fmt: skip
    return None if n < 0 else (idx[:n], cnt[:n], off)


def _batch(encoded: Sequence[str | bytes | None], b64: bool) -> tuple[np.ndarray, ...]:
    """(index, count, offsets) of many histograms in any envelope (`decode_v2_batch`)."""
    fast = _agents_batch(encoded) if b64 else None
    if fast is not None:
        return fast
    return decode_v2_batch([v2(e, b64) if e else b"" for e in encoded])


def decode_many(encoded: Sequence[str | bytes | None], b64: bool = True) -> tuple[np.ndarray, ...]:
    """Sparse counts of many histograms: (hist_no, index, count), sorted by hist then index.

    `b64=False` takes the raw bytes (the store's BLOBs).
    """
    idx, cnt, off = _batch(encoded, b64)
    hist_no = np.repeat(np.arange(len(encoded), dtype=np.int64), np.diff(off))
    return hist_no, idx, cnt


def decode(encoded: str) -> HdrHistogram:
    """One histogram from either the agents' encoding or hdrh's compressed one."""
    hist = new_hist()
    add_counts(hist, *sparse_counts([encoded])[0])
    return hist


def sparse_counts(
    encoded: Sequence[str | bytes | None], b64: bool = True
) -> list[tuple[np.ndarray, np.ndarray]]:
    """Each histogram's non-empty buckets (index, count), in index order, decoded in one
    pass (None or "" = empty): what `add_counts` adds, with no histogram per payload."""
    idx, cnt, offsets = _batch(encoded, b64)
    off = offsets.tolist()
    return [(idx[off[h] : off[h + 1]], cnt[off[h] : off[h + 1]]) for h in range(len(encoded))]


def counts_view(hist: HdrHistogram) -> np.ndarray:
    """hdrh's counts array of `hist` as a numpy view (uint64, in place), made once per
    histogram (hdrh never replaces the array)."""
    view = hist.__dict__.get("_lt_counts")
    if view is None:
        view = np.ctypeslib.as_array(hist.counts)
        hist.__dict__["_lt_counts"] = view
    return cast(np.ndarray, view)


def add_counts(hist: HdrHistogram, index: np.ndarray, count: np.ndarray) -> None:
    """Add one histogram's sparse counts (`sparse_counts`) into `hist` in place: the same
    counts, total, min and max as `hist.add(decode(...))`, without building the 136 KiB
    histogram (a fresh one per payload cost the live view most of its time, and freed
    blocks of that size fragment the heap). Min and max come from the index's bucket
    bounds (LOW_VALUES / HIGH_VALUES: hdrh's value_from_index and its highest
    equivalent), with no call into hdrh."""
    if not index.size:
        return
    # indexes are unique within one histogram; counts are >= 0, so int64 -> uint64 is
    # the same bits
    counts_view(hist)[index] += (
        count.view(np.uint64) if count.dtype == np.int64 else count.astype(np.uint64))
    _added(hist, int(count.sum()), int(index[0]), int(index[-1]))


def _added(hist: HdrHistogram, total: int, lowest: int, highest: int) -> None:
    """`hist`'s total, min and max once `total` counts went into its buckets `lowest` ..
    `highest` (their bounds: LOW_VALUES / HIGH_VALUES)."""
    hist.total_count += total
    top, bottom = int(HIGH_VALUES[highest]), int(LOW_VALUES[lowest])
    if top > hist.max_value:
        hist.max_value = top
    if bottom < hist.min_value:
        hist.min_value = bottom


def add_encoded(hist: HdrHistogram, encoded: Sequence[str | bytes | None], b64: bool = True
                ) -> None:
    """Add many encoded histograms (any envelope, as `sparse_counts` takes them) into
    `hist` in place: decoded in one pass and their buckets added straight into its counts
    (what `add_many_counts(hist, sparse_counts(encoded))` gives, with no array per
    histogram and no pass over every bucket). Raises ValueError, adding nothing, when
    one of them is not an HDR histogram."""
    idx, cnt, _off = _batch(encoded, b64)
    if not idx.size:
        return
    # counts are > 0 and hdrh's are uint64: the same bits as int64 below 2**63
    _kernels().add_pairs(counts_view(hist).view(np.int64), idx, cnt)
    _added(hist, int(cnt.sum()), int(idx.min()), int(idx.max()))


def add_many_counts(hist: HdrHistogram, parts: Sequence[tuple[np.ndarray, np.ndarray]]) -> None:
    """Add many histograms' sparse counts into `hist` at once: summed by index first (one
    pass over them all), then one `add_counts`: what adding each in turn gives (exact
    while a bucket's sum stays below 2**53)."""
    parts = [p for p in parts if p[0].size]
    if len(parts) <= 1:
        for index, count in parts:
            add_counts(hist, index, count)
        return
    index = np.concatenate([i for i, _c in parts])
    count = np.concatenate([c for _i, c in parts])
    # summed per bucket over the whole counts array (float64 is exact below 2**53)
    summed = np.bincount(index, weights=count, minlength=COUNTS_LEN)
    nonzero = np.flatnonzero(summed)
    add_counts(hist, nonzero, summed[nonzero].astype(np.int64))


def release(hist: HdrHistogram) -> None:
    """Let go of a histogram that is done with now, not at the cyclic collector's next
    full pass: an hdrh histogram and its encoder refer to each other, so a dropped one
    (136 KiB of counts) waits for the oldest generation's collection, which a long run
    reaches rarely; the live view drops several a second. Only for a histogram nothing
    reads again."""
    hist.encoder = None


def payload(encoded: str | bytes, b64: bool = True) -> bytes:
    """The varint counts payload of any of the three envelopes."""
    raw = v2(encoded, b64)
    _, plen = _EXTERNAL_HEADER.unpack_from(raw)
    return raw[PAYLOAD_HEADER.size : PAYLOAD_HEADER.size + plen]


def _v2_encoding(varints: bytes | memoryview) -> bytes:
    """The uncompressed V2 encoding (header + payload) of a varint counts payload."""
    header = bytearray(PAYLOAD_HEADER.size)
    pack_header(header, len(varints))
    return bytes(header) + bytes(varints)


def stored(varints: bytes | memoryview) -> bytes:
    """The store's BLOB for a varint payload."""
    plain = _v2_encoding(varints)
    return _STORED_HEADER.pack(STORED_MAGIC, len(plain)) + cast(
        bytes, _ZSTD.compress(plain, asbytes=True)  # pyarrow is untyped: asbytes gives bytes
    )


def standard(blob: bytes) -> str:
    """Any envelope as hdrh's base64 compressed V2 text (`HdrHistogram.decode` reads it)."""
    body = zlib.compress(_v2_encoding(payload(blob, b64=False)))
    return base64.b64encode(_EXTERNAL_HEADER.pack(_COMPRESSION_COOKIE, len(body)) + body).decode()


def dense(hist_no: np.ndarray, index: np.ndarray, count: np.ndarray, groups: int) -> np.ndarray:
    """Sum sparse entries into a dense (groups, COUNTS_LEN) int64 matrix."""
    flat = np.bincount(hist_no * COUNTS_LEN + index, weights=count, minlength=groups * COUNTS_LEN)
    return flat.astype(np.int64).reshape(groups, COUNTS_LEN)


def dense_percentiles(mat: np.ndarray, percentiles: Sequence[float]) -> np.ndarray:
    """Per row of dense counts, each percentile (0..100) in ms (NaN when the row is empty),
    as a (rows, len(percentiles)) array. 100 is the maximum."""
    out = np.full((mat.shape[0], len(percentiles)), np.nan)
    if mat.size == 0:
        return out
    cs = np.cumsum(mat, axis=1)
    total = cs[:, -1]
    ok = total > 0
    for j, p in enumerate(percentiles):
        target = np.maximum((p * total / 100.0 + 0.5).astype(np.int64), 1)
        idx = np.argmax(cs >= target[:, None], axis=1)
        out[:, j] = np.where(ok, HIGH_VALUES[idx] / 1000.0, np.nan)
    return out


def dense_stats(mat: np.ndarray) -> np.ndarray:
    """Per row: p50, p90, p99, p99.9, max in ms (NaN when empty), as a (rows, 5) array."""
    out = np.full((mat.shape[0], len(PERCENTILES) + 1), np.nan)
    if mat.size == 0:
        return out
    out[:, :-1] = dense_percentiles(mat, PERCENTILES)
    last = COUNTS_LEN - 1 - np.argmax(mat[:, ::-1] > 0, axis=1)
    nonempty = mat[np.arange(mat.shape[0]), last] > 0  # an empty row's `last` holds 0
    out[:, -1] = np.where(nonempty, HIGH_VALUES[last] / 1000.0, np.nan)
    return out


def merged_percentiles(
    groups: Sequence[Sequence[bytes | None] | None], percentiles: Sequence[float]
) -> np.ndarray:
    """Merge each group of stored BLOBs (None entries skipped) and take `percentiles` of it:
    a (groups, len(percentiles)) array in ms, NaN for a group with no counts."""
    blobs: list[bytes] = []
    owner: list[int] = []
    for g, group in enumerate(groups):
        for blob in group or ():
            if blob is not None:
                blobs.append(bytes(blob))
                owner.append(g)
    no, idx, cnt = decode_many(blobs, b64=False)
    rows = np.asarray(owner, dtype=np.int64)[no]
    return dense_percentiles(dense(rows, idx, cnt, len(groups)), percentiles)
