"""The compiled loop that reads the agents' histograms from their base64 text.

An interval line carries each op's histograms as base64 of the uncompressed V2 encoding
(protocol/hdr_encoding.py). The live view and the lateness check read a line's
histograms as sparse counts; decoding each one's base64 in Python (and checking its
header) cost more than decoding its counts. This loop does both for a whole batch,
touching each byte once (hdr.py falls back to the Python path for any other form, and
for a batch this loop refuses, so that a bad histogram is named as before).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt
from numba import njit

from loadtower.store.hdr_kernels import b64_decode, decode_sparse

I64 = npt.NDArray[np.int64]
U8 = npt.NDArray[np.uint8]


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
