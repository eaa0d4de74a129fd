"""The agent protocol's HDR histograms: value range, counts layout, V2 header.

Values are microseconds in HdrHistogram(1, 60e6, 3), the layout hdrh and Java use:
counts index ``(bucket + 1) * SUB_HALF + sub - SUB_HALF``. The agents write the
uncompressed V2 encoding (a 40-byte header, then ZigZag varint counts) and the store
reads it. Only `struct` here: the agents import this without the store's libraries.
"""

from __future__ import annotations

import struct

LOWEST, HIGHEST, DIGITS = 1, 60_000_000, 3  # us
SUB_HALF_MAG = 10  # 2 * 10**3 -> 2048 sub-buckets, half = 1024
SUB_HALF = 1 << SUB_HALF_MAG
BUCKETS = 16  # smallest 2048 << k above 60e6
COUNTS_LEN = (BUCKETS + 1) * SUB_HALF
ENCODING_COOKIE = 0x1C849303 | 0x10  # uncompressed V2
PAYLOAD_HEADER = struct.Struct(">IIIIqqd")  # cookie, payload length, offset, digits, range, ratio


def pack_header(buf: bytearray | memoryview, payload_len: int) -> None:
    """Write the V2 header of a `payload_len`-byte varint payload at the start of `buf`."""
    PAYLOAD_HEADER.pack_into(buf, 0, ENCODING_COOKIE, payload_len, 0, DIGITS, LOWEST, HIGHEST, 1.0)
