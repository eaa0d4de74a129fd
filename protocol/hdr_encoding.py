"""Writing the agent protocol's histograms: a new HdrHistogram and its V2 encoding.

Both sides need these: the agents encode every second's histograms, the store's
compiler warm-up and tests encode samples. Only third-party packages (hdrh, pyhdrh)
and `hdr_format` here; decoding many at once is the store's job (store/hdr.py).
"""

from __future__ import annotations

import base64
import ctypes

import pyhdrh
from hdrh.histogram import HdrHistogram

from loadtower.protocol.hdr_format import DIGITS, HIGHEST, LOWEST, PAYLOAD_HEADER, pack_header


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
