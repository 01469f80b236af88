"""Secret deals: a league's seed and deal key, the keyed deal seeds, the commitment shown meanwhile.

A league's plan (which tables, which seats) follows from its seed, and so does each block's
*plan seed* (:mod:`workers.planning` and the formats). The deal a block plays is its *deal seed*:

- a league whose seed was drawn (no ``--seed``) also draws a 32-byte deal key, and each block's
  deal seed is ``keyed(deal_key, plan_seed)``: 63 bits of BLAKE2b keyed with the deal key (a PRF),
  so nothing public (its seed, a table number, other blocks' seeds) tells a deal still to be played;
- a league created with ``--seed N``, and every league made before deal keys existed, has no key:
  its deal seeds are its plan seeds, exactly as before, so the same seed replays the same deals
  (and its deals are exactly as secret as ``N``).

While a league runs, only :func:`commitment` is shown (``sha256(seed ‖ key)``); once it is finished
the seed and key are published, and :func:`verify` checks every block's deal seed from them.
"""

from __future__ import annotations

import hashlib
import os
import secrets
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

KEY_BYTES = 32
SECRET_UNTIL = "secret until the league is finished"


def draw(seed: int | None) -> tuple[int, bytes | None]:
    """A new league's (seed, deal key): both drawn from the OS's randomness unless a seed is given,
    in which case the deals follow from that seed alone (no key)."""
    if seed is not None:
        return seed, None
    return secrets.randbits(63), os.urandom(KEY_BYTES)


def keyed(deal_key: bytes, plan_seed: int) -> int:
    """The deal seed of a block of a league with a deal key: a 63-bit keyed BLAKE2b of its plan seed."""
    digest = hashlib.blake2b(_seed_bytes(plan_seed), key=deal_key, digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 1


def deal_seed(deal_key: bytes | None, plan_seed: int) -> int:
    """What a block with this plan seed plays: keyed if the league has a deal key, else the plan seed."""
    return plan_seed if deal_key is None else keyed(deal_key, plan_seed)


def commitment(seed: int, deal_key: bytes | None) -> str:
    """SHA-256 (hex) of the seed (8 bytes, signed big-endian) followed by the deal key (if any):
    shown while the league runs, it binds the league to the seed and key published at its end."""
    return hashlib.sha256(_seed_bytes(seed) + (deal_key or b"")).hexdigest()


def _seed_bytes(seed: int) -> bytes:
    return seed.to_bytes(8, "big", signed=True)


def shown(seed: int, deal_key: bytes | None, finished: bool) -> dict[str, Any]:
    """What every output (command line, dashboard, API) shows of a league's seed and deal key.

    While the league runs: the commitment alone. Once it is finished: the seed and the key (hex;
    ``None`` for a league without one) too, which anyone can check against the commitment.
    """
    out: dict[str, Any] = {"commitment": commitment(seed, deal_key), "keyed": deal_key is not None}
    if finished:
        out |= {"seed": seed, "deal_key": None if deal_key is None else deal_key.hex()}
    else:
        out |= {"seed": None, "deal_key": None, "secret": SECRET_UNTIL}
    return out


def describe(info: dict[str, Any]) -> str:
    """:func:`shown` as one line of text."""
    if info["seed"] is None:
        return f"seed and deal key {SECRET_UNTIL} (commitment sha256 {info['commitment']})"
    key = info["deal_key"] or "none (deals follow from the seed)"
    return f"seed {info['seed']}, deal key {key} (commitment sha256 {info['commitment']})"


# --- verification ------------------------------------------------------------------------------


def plan_seeds(
    league_format: str, stopping: dict[str, Any] | None, seed: int, deals: int, entrants: int,
    table_size: int, number: int,
) -> set[int]:  # fmt: skip
    """The plan seeds block ``number`` of such a league can have (one, but a ladder's depends on how
    many entrants it had when the block's round was planned: one per possible count)."""
    # The formats' planners (adaptive brings the ranking and its numerical code): only when deals
    # are verified, not when the command line's root loads this module (draw) at start-up.
    from workers import planning
    from workers.planning import adaptive, ladder, sprt

    kind = (stopping or {}).get("kind")
    if league_format == "ladder" or kind == "ladder":
        return {ladder.block_seed(seed, n, number) for n in range(table_size, entrants + 1)}
    if kind == sprt.KIND:
        return {sprt.deal_seed(seed, number // 2)}
    if kind == "adaptive":
        return {adaptive.deal_seed(seed, number)}
    return {planning.fixed_plan_seed(league_format, seed, deals, number)}


@dataclass(frozen=True, slots=True)
class Checked:
    """One block's deal seed, checked against the published seed and key."""

    block: int
    stored: int
    expected: tuple[int, ...]
    """The deal seeds the seed and key give for it (a ladder block: one per possible entrant count)."""
    matches_ok: bool
    """Every match stored for the block played its deal seed."""

    @property
    def ok(self) -> bool:
        return self.stored in self.expected and self.matches_ok


def check_blocks(league: Any, blocks: Iterable[tuple[int, int, Sequence[int]]]) -> list[Checked]:
    """Each block ``(number, stored seed, seeds its matches played)`` of ``league`` (a
    :class:`workers.store.repo.League` or alike) against its seed and deal key."""
    out = []
    for number, stored, played in blocks:
        seeds = plan_seeds(
            league.format, league.stopping, league.seed, league.deals, len(league.entrants),
            league.table_size, number,
        )  # fmt: skip
        expected = tuple(sorted(deal_seed(league.deal_key, s) for s in seeds))
        out.append(Checked(number, stored, expected, all(p == stored for p in played)))
    return out
