"""Seeded chance: every random outcome of a match derives from its seed and nothing else.

The generator hashes ``(seed, counter)`` with BLAKE2b, so a sequence depends only on the seed,
is identical on every machine and Python version, and holds no global state. Partial
permutations are decoded from the hashed bits in the factorial number system, one hash per
~500 bits of randomness, which is what makes dealing a hand cheap.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")

_BLOCK_BITS = 512


class SeededChance:
    """A deterministic source of chance outcomes for one match."""

    __slots__ = ("_counter", "_key")

    def __init__(self, seed: int) -> None:
        if not 0 <= seed < 2**256:
            raise ValueError(f"seed must be in [0, 2**256), got {seed}")
        self._key = seed.to_bytes((seed.bit_length() + 8) // 8, "big")
        self._counter = 0

    def _bits(self, n: int) -> int:
        """Return ``n`` fresh random bits as an integer."""
        value = 0
        have = 0
        while have < n:
            digest = hashlib.blake2b(self._counter.to_bytes(8, "big"), key=self._key, digest_size=64).digest()
            self._counter += 1
            value = (value << _BLOCK_BITS) | int.from_bytes(digest, "big")
            have += _BLOCK_BITS
        return value >> (have - n)

    def below(self, n: int) -> int:
        """A uniform integer in ``[0, n)``."""
        if n <= 0:
            raise ValueError(f"below() needs a positive bound, got {n}")
        # 128 surplus bits make the modulo bias smaller than 2**-128.
        return self._bits(n.bit_length() + 128) % n

    def sample(self, items: Sequence[T], k: int) -> list[T]:
        """``k`` distinct items in random order (a uniform partial permutation)."""
        n = len(items)
        if not 0 <= k <= n:
            raise ValueError(f"cannot sample {k} of {n} items")
        pool = list(items)
        # Enough bits for n!/(n-k)! outcomes plus 128 bits of slack against bias.
        bits = sum((n - i).bit_length() for i in range(k)) + 128
        number = self._bits(bits)
        out: list[T] = []
        for i in range(k):
            number, j = divmod(number, n - i)
            last = n - 1 - i
            pool[j], pool[last] = pool[last], pool[j]
            out.append(pool[last])
        return out

    def shuffled(self, items: Sequence[T]) -> list[T]:
        """All items in random order."""
        return self.sample(items, len(items))


def seat_seed(match_seed: int, seat: int, key: bytes = b"") -> int:
    """The seed of one seat's bot in a match: independent of the deal and of the other seats.

    Under a secret ``key`` (the referee's, up to 64 bytes) a bot cannot search for the match
    seed, and so the deal, by trying seeds until one gives its own seat seed.
    """
    digest = hashlib.blake2b(f"{match_seed}/{seat}".encode(), key=key, digest_size=8).digest()
    return int.from_bytes(digest, "big")
