"""Writing the agent protocol's histograms: a new HdrHistogram and its V2 encoding,
and reading one back.

Both sides need these: the agents encode every second's histograms (and decode the Rust
core's), the store's compiler warm-up and tests encode samples, the orchestrator reads a
line's lateness for its saturation warning. Only third-party packages (hdrh, pyhdrh) and
`hdr_format` here; decoding many at once is the store's job (store/hdr.py).
"""

from __future__ import annotations

import base64
import ctypes
import struct

import pyhdrh
from hdrh.histogram import HdrHistogram

from loadtower.protocol.hdr_format import (
    DIGITS,
    ENCODING_COOKIE,
    HIGHEST,
    LOWEST,
    PAYLOAD_HEADER,
    pack_header,
)

_V2_COOKIE = struct.pack(">I", ENCODING_COOKIE)
_V2_FIELDS = struct.pack(">IIqq", 0, DIGITS, LOWEST, HIGHEST)  # header bytes 8..32


def new_hist() -> HdrHistogram:
    """An empty histogram of the protocol's range and precision (microseconds)."""
    return HdrHistogram(LOWEST, HIGHEST, DIGITS)


def encode(hist: HdrHistogram) -> str:
    """`hist` as base64 of the uncompressed V2 encoding."""
    limit = hist.get_counts_array_index(hist.max_value) + 1 if hist.total_count else 0
    head = PAYLOAD_HEADER.size
    word_size = int(hist.word_size)
    buf = ctypes.create_string_buffer(head + limit * (word_size + 1))
    size = 0
    if limit:
        room = limit * (word_size + 1)
        addr = ctypes.addressof(buf) + head
        size = int(pyhdrh.encode(ctypes.addressof(hist.counts), limit, word_size, addr, room))
    pack_header(memoryview(buf), size)
    return base64.b64encode(buf.raw[: head + size]).decode()


def decode_v2(raw: bytes) -> HdrHistogram:
    """A histogram from the uncompressed V2 encoding (header + varint counts, not base64)
    of the protocol's range; ValueError for anything else."""
    if len(raw) < PAYLOAD_HEADER.size or raw[:4] != _V2_COOKIE or raw[8:32] != _V2_FIELDS:
        raise ValueError("not an HDR V2 histogram over the protocol's range")
    hist = new_hist()
    if PAYLOAD_HEADER.size + int.from_bytes(raw[4:8], "big") > len(raw):
        raise ValueError("HDR V2 histogram payload is truncated")
    got = pyhdrh.decode(raw, PAYLOAD_HEADER.size, ctypes.addressof(hist.counts),
                        hist.counts_len, hist.word_size)
    hist.set_internal_tacking_values(got["min_nonzero_index"], got["max_nonzero_index"],
                                     got["total"])
    return hist


def decode(text: str) -> HdrHistogram:
    """A line's histogram (base64 of the V2 encoding, what `encode` writes)."""
    return decode_v2(base64.b64decode(text))
