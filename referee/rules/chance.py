"""Seeded chance: every random outcome of a match derives from its seed and nothing else.

The generator hashes ``(seed, counter)`` with BLAKE2b, so a sequence depends only on the seed,
is identical on every machine and Python version, and holds no global state. Partial
permutations are decoded from the hashed bits in the factorial number system, one hash per
~500 bits of randomness, which is what makes dealing a hand cheap.
"""

from __future__ import annotations

import functools
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
        bits, chunks = _sample_plan(n, k)
        number = self._bits(bits)
        pool = list(items)
        out: list[T] = []
        append = out.append
        # Digit i of ``number`` in the mixed radix n, n-1, …, n-k+1 picks the i-th item from
        # the pool's first n-i places; the last of them takes the picked item's place. The big
        # number is divided once per chunk and the chunk's digits come from the remainder, a
        # single-digit int that CPython divides on a fast path: the very same digits as
        # dividing the big number each time, so a seed's outcomes are unchanged.
        for product, radices in chunks:
            number, small = divmod(number, product)
            for radix in radices:
                j = small % radix
                small //= radix
                append(pool[j])
                pool[j] = pool[radix - 1]
        return out

    def shuffled(self, items: Sequence[T]) -> list[T]:
        """All items in random order."""
        return self.sample(items, len(items))


_SMALL = 1 << 30
"""Remainders below this are single-digit ints for CPython: cheap to divide."""


@functools.lru_cache(maxsize=256)
def _sample_plan(n: int, k: int) -> tuple[int, tuple[tuple[int, tuple[int, ...]], ...]]:
    """How :meth:`SeededChance.sample` draws ``k`` of ``n`` items: the bits it needs and its chunks.

    The radices n, n-1, …, n-k+1 are grouped into chunks ``(product, radices)`` whose product
    stays below 2**30 (a lone bigger radix makes a chunk of its own).
    """
    # Enough bits for n!/(n-k)! outcomes plus 128 bits of slack against bias.
    bits = sum((n - i).bit_length() for i in range(k)) + 128
    chunks: list[tuple[int, tuple[int, ...]]] = []
    radices: list[int] = []
    product = 1
    for radix in range(n, n - k, -1):
        if radices and product * radix >= _SMALL:
            chunks.append((product, tuple(radices)))
            radices, product = [], 1
        radices.append(radix)
        product *= radix
    if radices:
        chunks.append((product, tuple(radices)))
    return bits, tuple(chunks)


def seat_seed(match_seed: int, seat: int, key: bytes = b"") -> int:
    """The seed of one seat's bot in a match: independent of the deal and of the other seats.

    Under a secret ``key`` (the referee's, up to 64 bytes) a bot cannot search for the match
    seed, and so the deal, by trying seeds until one gives its own seat seed.
    """
    digest = hashlib.blake2b(f"{match_seed}/{seat}".encode(), key=key, digest_size=8).digest()
    return int.from_bytes(digest, "big")
