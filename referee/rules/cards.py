"""Mechanics the card and board games share: bull heads (and, re-exported from
:mod:`referee.rules.placement`, placing a card at a row's end)."""

from __future__ import annotations

from referee.rules.placement import ascending_row as ascending_row  # re-exported


def bull_heads(card: int) -> int:
    """The bull heads printed on a classic card: 55 → 7, doubles → 5, tens → 3, fives → 2, else 1."""
    if card % 11 == 0 and card % 5 == 0 and card < 100:
        return 7
    if card % 11 == 0 and card < 100:
        return 5
    if card % 10 == 0:
        return 3
    if card % 5 == 0:
        return 2
    return 1


def bull_table(top: int) -> tuple[int, ...]:
    """Bull heads indexed by card number, for 0 … top (index 0 unused)."""
    return (0, *(bull_heads(c) for c in range(1, top + 1)))


BULLS: tuple[int, ...] = bull_table(104)
"""Bull heads of the 104 classic cards, indexed by card number."""

