"""64-bit FNV hashes of key numbers, as YCSB's ``Utils.fnvhash64`` defines them.

YCSB hashes a ``long`` byte by byte, low byte first: for each of the 8 bytes it XORs the
byte into the hash, then multiplies by the FNV prime (FNV-1a order), all in wrapping
64-bit arithmetic; at the end it returns ``Math.abs`` of the signed result. ``fnv64`` is
that hash before the ``Math.abs`` (unsigned, what the schemas' key names use);
``fnvhash64`` is YCSB's, sign and ``Math.abs`` included; ``fnvhash64_array`` is
``fnvhash64`` over a numpy array at once (the scrambled zipfian hashes whole batches).
"""

from __future__ import annotations

import numpy as np

FNV_OFFSET = 0xCBF29CE484222325  # YCSB's FNV_OFFSET_BASIS_64
FNV_PRIME = 0x100000001B3  # YCSB's FNV_PRIME_64 = 1099511628211
MASK64 = (1 << 64) - 1
SIGN64 = 1 << 63


def fnv64(value: int) -> int:
    """FNV-1a over the 8 little-endian (two's complement) bytes of the value, as an
    unsigned 64-bit number (unrolled: the agents hash every key they send)."""
    p, m = FNV_PRIME, MASK64
    h = ((FNV_OFFSET ^ (value & 0xFF)) * p) & m
    h = ((h ^ ((value >> 8) & 0xFF)) * p) & m
    h = ((h ^ ((value >> 16) & 0xFF)) * p) & m
    h = ((h ^ ((value >> 24) & 0xFF)) * p) & m
    h = ((h ^ ((value >> 32) & 0xFF)) * p) & m
    h = ((h ^ ((value >> 40) & 0xFF)) * p) & m
    h = ((h ^ ((value >> 48) & 0xFF)) * p) & m
    return ((h ^ ((value >> 56) & 0xFF)) * p) & m


def fnvhash64(value: int) -> int:
    """YCSB's ``Utils.fnvhash64``: ``Math.abs`` of ``fnv64`` read as a signed long.

    Like Java's ``Math.abs``, the one hash 2**63 (``Long.MIN_VALUE``) stays negative;
    no key number YCSB's generators produce hashes to it (tests/agents prove it for
    every value below 2**34)."""
    h = fnv64(value)
    if h < SIGN64:
        return h
    return h - (1 << 64) if h == SIGN64 else (1 << 64) - h


def fnvhash64_array(values: np.ndarray) -> np.ndarray:
    """``fnvhash64`` of every value of an integer array (int64 result, wrapping uint64
    arithmetic as Java's long does)."""
    v = np.asarray(values).astype(np.uint64)
    h = np.full(v.shape, FNV_OFFSET, dtype=np.uint64)
    low, prime, eight = np.uint64(0xFF), np.uint64(FNV_PRIME), np.uint64(8)
    for _ in range(8):
        h ^= v & low
        h *= prime
        v >>= eight
    return np.abs(h.view(np.int64))
