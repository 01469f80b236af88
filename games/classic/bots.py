"""Simple classic reference bots: random, lowest, highest, and a one-turn risk heuristic.

They are sparring partners and baselines: :class:`RandomBot` is the floor every bot should
beat (and cheap enough for engine benchmarks), :class:`HeuristicBot` plays the card whose
expected bull heads this turn are fewest, given that the other seats' cards are unknown.
"""

from __future__ import annotations

from collections.abc import Sequence
from math import comb

from bot_sdk.bot import row_heads
from games.classic.rules.classic import ClassicView
from games.classic.sdk import ClassicBot
from referee.rules.cards import BULLS, bull_heads
from referee.rules.placement import LOW, ascending_row, placement

_NO_GAP = 1 << 30


class RandomBot(ClassicBot):
    """A uniformly random card, and a uniformly random row for a low card."""

    def choose_card(self, view: ClassicView) -> int:
        hand = view.hand
        return hand[int(self.rng.random() * len(hand))]

    def choose_row(self, view: ClassicView) -> int:
        return int(self.rng.random() * len(view.rows))


class LowestBot(ClassicBot):
    """Always the lowest card; a low card takes the row with the fewest bull heads."""

    def choose_card(self, view: ClassicView) -> int:
        return min(view.hand)


class HighestBot(ClassicBot):
    """Always the highest card; a low card takes the row with the fewest bull heads."""

    def choose_card(self, view: ClassicView) -> int:
        return max(view.hand)


class HeuristicBot(ClassicBot):
    """The card with the fewest expected bull heads this turn; the cheapest row for a low card.

    The other seats' cards are modelled as drawn uniformly from the cards this seat has not
    seen, so the number of them that land in a card's row before it is hypergeometric and the
    expectation is exact up to the cards those seats place elsewhere. Ties go to the tightest
    fit (see :func:`card_risks`).
    """

    def choose_card(self, view: ClassicView) -> int:
        return min(card_risks(view))[2]

    def choose_row(self, view: ClassicView) -> int:
        return cheapest_row(view.rows, view.revealed, view.seat)


def card_risks(view: ClassicView) -> list[tuple[float, int, int]]:
    """Each hand card as ``(expected bull heads this turn, gap to its row's end, card)``.

    Sorted, the first one is the heuristic's choice: the least risk, then the tightest fit, a
    card that is safe now but becomes dangerous once the rows grow (a low card's gap counts as
    unbounded).
    """
    unseen = view.unseen()
    others = view.players - 1
    risks = []
    for card in view.hand:
        risk = expected_penalty(
            card, view.rows, unseen, others, view.row_capacity, professional=view.professional
        )
        row, _ = placement(card, view.rows)
        gap = card - view.rows[row][-1] if row != LOW else _NO_GAP
        risks.append((round(risk, 9), gap, card))
    return risks


def cheapest_row(rows: Sequence[Sequence[int]], revealed: Sequence[tuple[int, int]], seat: int) -> int:
    """The row a low card should take: fewest bull heads, then the one others' cards feed least.

    On a tie, prefer the row that this turn's later cards (all face up during the choice) do
    not fill, so the fresh row with our card stays short; then the shorter row.
    """
    mine = [card for card, s in revealed if s == seat]
    low = min(mine) if mine else 0
    later = [card for card, _ in revealed if card > low]

    def key(index: int) -> tuple[int, int, int]:
        lasts = [row[-1] for row in rows]
        lasts[index] = low
        fed = sum(1 for card in later if ascending_row(card, lasts) == index)
        return (row_heads(rows[index]), fed, len(rows[index]))

    return min(range(len(rows)), key=key)


def expected_penalty(
    card: int,
    rows: Sequence[Sequence[int]],
    unseen: Sequence[int],
    others: int,
    capacity: int,
    *,
    professional: bool = False,
) -> float:
    """The expected bull heads ``card`` takes this turn when ``others`` unseen cards are played too.

    A card below every row takes the cheapest row. Otherwise, of the other cards only those
    between the row's end and ``card`` are placed in the same row before it; their number is
    hypergeometric and each brings the mean bull heads of such cards. (Other seats' low cards,
    which may take and restart a row first, are neglected.)
    """
    row_index, left = placement(card, rows, professional)
    if row_index == LOW:
        return float(min(row_heads(row) for row in rows))
    row = rows[row_index]
    length, heads = len(row), row_heads(row)
    if left:
        # Cards between ours and the row's first card are placed after ours.
        return float(heads) if length >= capacity else 0.0
    end = row[-1]
    between = [c for c in unseen if end < c < card]
    pool, drawn, hits = len(unseen), min(others, len(unseen)), len(between)
    if hits == 0 or drawn == 0:
        return float(heads) if length >= capacity else 0.0
    mean_heads = sum(BULLS[c] if c < len(BULLS) else bull_heads(c) for c in between) / hits
    total = comb(pool, drawn)
    expected = 0.0
    for k in range(min(hits, drawn) + 1):
        p = comb(hits, k) * comb(pool - hits, drawn - k) / total
        if p == 0.0:
            continue
        taken = _taken_after(length, float(heads), k, mean_heads, capacity)
        expected += p * taken
    return expected


def _taken_after(length: int, heads: float, arrivals: int, mean_heads: float, capacity: int) -> float:
    """The bull heads our card takes from a row after ``arrivals`` other cards went there first."""
    for _ in range(arrivals):
        if length >= capacity:
            length, heads = 1, mean_heads
        else:
            length, heads = length + 1, heads + mean_heads
    return heads if length >= capacity else 0.0
