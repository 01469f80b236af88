"""Hostile: predicts its deal (every opponent's hand) from everything it can see.

What it knows: whatever the league showed in public when its author wrote it (``__PUBLIC__``, filled
in by the test: every number that ``league status --json`` and the dashboard's API printed, the
commitment, the seeds of the matches already played), its own environment, the old default
seed (1) and small seeds, and how deal seeds used to follow from a league seed
(``referee.rules.seeding.derive_seed`` of ``seed/table/t/deal/d`` and the other formats'
paths), for every table number. It searches those for a deal that gives it the rows and hand it was dealt; the
deal found (or, if none fits, its best guess: the old default seed's first table) is its
prediction. At its first decision in each match it reports the prediction by raising
``RuntimeError("hostile deals: FOUND|GUESSED seed … deal […]")``, so it lands in the seat's
fault reasons, where the test compares it with the stored transcript's deal.
"""

from __future__ import annotations

import json
import os
import re
import threading

from bot_sdk import ClassicBot
from referee.rules.chance import SeededChance
from referee.rules.registry import make_variant
from referee.rules.seeding import derive_seed

PUBLIC = json.loads(r"""__PUBLIC__""")
SMALL_SEEDS = range(64)
TABLES = 16
"""Table (and block) numbers tried in every format's old derivation."""
MAX_CANDIDATES = 60_000


def parent_seeds() -> list[int]:
    """Every league seed it can think of: small ones, public numbers, its environment's numbers."""
    seeds = list(SMALL_SEEDS)
    seeds += [int(n) for n in PUBLIC.get("numbers", []) if isinstance(n, int)]
    commitment = PUBLIC.get("commitment") or ""
    if commitment:
        whole = int(commitment, 16)
        seeds += [whole >> 193, whole & (2**63 - 1), int(commitment[:16], 16) >> 1]
    for value in os.environ.values():
        seeds += [int(n) for n in re.findall(r"\d{1,19}", value)]
    return list(dict.fromkeys(s for s in seeds if 0 <= s < 2**63))


def candidate_deal_seeds() -> list[tuple[str, int]]:
    """(how, deal seed) pairs: each parent seed through every format's old derivation, every
    public match seed as it is."""
    out: list[tuple[str, int]] = [(f"public match seed {s}", int(s)) for s in PUBLIC.get("match_seeds", [])]
    for seed in parent_seeds():
        out.append((f"seed {seed} itself", seed))
        for t in range(TABLES):
            for d in range(2):
                out.append((f"seed {seed} table {t} deal {d}", derive_seed(seed, "table", t, "deal", d)))
            out.append((f"seed {seed} adaptive {t}", derive_seed(seed, "adaptive", "deal", t)))
            for n in range(2, 6):
                out.append((f"seed {seed} ladder {n} {t}", derive_seed(seed, "ladder", n, "block", t)))
        if len(out) > MAX_CANDIDATES:
            break
    return out


def first_deal(players: int, seed: int) -> tuple[int, ...]:
    """The cards a classic match with this seed deals first: four row cards, then each seat's hand."""
    variant = make_variant("classic", {"players": players})
    return tuple(variant.sample_chance(variant.initial_state(), SeededChance(seed)))


class Deals(ClassicBot):
    """Reports its prediction at its first decision of each match, then plays the lowest card."""

    reported = False

    def choose_card(self, view):  # type: ignore[no-untyped-def]
        if not self.reported:
            self.reported = True
            raise RuntimeError(f"hostile deals: {predict(view)}")
        return min(view.hand)


_LOCK = threading.Lock()
_DEALS: dict[int, dict[tuple[int, ...], list[tuple[str, tuple[int, ...]]]]] = {}


def deals_by_rows(players: int) -> dict[tuple[int, ...], list[tuple[str, tuple[int, ...]]]]:
    """Every candidate's first deal by its four row cards, computed once per process."""
    with _LOCK:
        if players not in _DEALS:
            index: dict[tuple[int, ...], list[tuple[str, tuple[int, ...]]]] = {}
            for how, seed in candidate_deal_seeds():
                deal = first_deal(players, seed)
                index.setdefault(deal[:4], []).append((how, deal))
            _DEALS[players] = index
        return _DEALS[players]


def predict(view) -> str:  # type: ignore[no-untyped-def]
    rows = tuple(row[0] for row in view.rows)
    mine = sorted(view.hand)
    size = len(view.hand)
    start = 4 + size * view.seat
    for how, deal in deals_by_rows(view.players).get(rows, []):
        if sorted(deal[start : start + size]) == mine:
            return f"FOUND {how} deal {json.dumps(list(deal))}"
    guess = first_deal(view.players, derive_seed(1, "table", 0, "deal", 0))
    return f"GUESSED seed 1 table 0 deal {json.dumps(list(guess))}"
