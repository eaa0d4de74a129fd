"""The compiled base64 reader (hdr_kernels.b64_decode) takes whole groups of four
characters at a time and the rest one by one: on valid text it gives binascii's bytes,
and on any text (cut padding, a bad character anywhere, '=' inside) exactly what the
character-by-character reading gives: the same bytes, or -1."""

from __future__ import annotations

import base64
import random

import numpy as np

from loadtower.store import hdr_kernels as kern


def one_by_one(text: bytes) -> bytes | None:
    """The reading character by character: '=' ends it, a character not of the
    alphabet refuses the text (None)."""
    out, acc, bits = bytearray(), 0, 0
    for ch in text:
        if ch == ord("="):
            break
        value = int(kern.B64[ch])
        if value == 255:
            return None
        acc, bits = ((acc << 6) | value) & 0xFFFFFF, bits + 6
        if bits >= 8:
            bits -= 8
            out.append((acc >> bits) & 0xFF)
    return bytes(out)


def compiled(text: bytes, offset: int = 0) -> bytes | None:
    buf = np.frombuffer(b"#" * offset + text, np.uint8)  # a start inside a larger buffer
    out = np.zeros(len(text) // 4 * 3 + 3, np.uint8)
    n = kern.b64_decode(buf, offset, offset + len(text), out)
    return None if n < 0 else out[:n].tobytes()


def test_valid_text_gives_binasciis_bytes() -> None:
    rng = random.Random(5)
    for size in range(0, 70):
        raw = bytes(rng.randrange(256) for _ in range(size))
        assert compiled(base64.b64encode(raw), offset=size % 3) == raw


def test_any_text_reads_as_one_character_at_a_time() -> None:
    rng = random.Random(11)
    for _ in range(3000):
        text = bytearray(base64.b64encode(bytes(rng.randrange(256) for _ in range(rng.randrange(60)))))
        roll = rng.random()
        if roll < 0.4 and text:  # one character replaced by one that is odd here
            text[rng.randrange(len(text))] = rng.choice(b"!-_ \n=\x00\xffA")
        elif roll < 0.6:
            text = text.rstrip(b"=")  # padding cut
        elif roll < 0.7 and text:
            del text[rng.randrange(len(text)):]  # cut anywhere
        assert compiled(bytes(text)) == one_by_one(bytes(text)), bytes(text)
