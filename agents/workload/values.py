"""Cheap field values: slices of one pre-generated random text pool."""

from __future__ import annotations

import random
import string

POOL_SIZE = 1 << 20


class ValuePool:
    def __init__(self, rng: random.Random) -> None:
        alphabet = string.ascii_letters + string.digits
        self.pool = "".join(rng.choices(alphabet, k=POOL_SIZE))
        self.rng = rng

    def text(self, size: int) -> str:
        start = self.rng.randrange(POOL_SIZE - size)
        return self.pool[start : start + size]
