"""The seeding contract: every seed a run of games uses, derived from the run's one seed.

``sixnimmt play`` (the SDK), the platform's tournaments, ``bot play`` and ``bot check``
(:mod:`arena`) and the league's planning (:mod:`workers.planning`) derive each game's seed here,
so the same seed gives the same games everywhere, on every machine and Python version. Pure (a
BLAKE2b hash, no generator), and in the rules layer so that every layer that plans or plays
games can share it.
"""

from __future__ import annotations

import hashlib


def derive_seed(seed: int, *path: int | str) -> int:
    """A 63-bit seed derived from a parent seed and a path (table, deal, …)."""
    text = "/".join(map(str, (seed, *path)))
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big") >> 1
