"""Where a card goes: classic 6 nimmt!'s rules 1–4 and the Professional option's left end.

This is the one placement rule of the project: rules 1 and 2 are written once, in
:func:`ascending_run`, and :func:`placement` adds the Professional option's left end to it.
The classic engine places every card with them (a turn without the Professional option with
:func:`ascending_run`, which also tells how many of the turn's ascending cards go to the same
row; a Professional turn with :func:`placement`), the board game attaches its tiles with
:func:`ascending_row`, and the reference bots call :func:`placement`, so no bot carries a copy
of the rules. Rule 3 (a full row is taken) does
not change *where* a card goes, only what it takes there: the caller compares the row's length
with the row capacity.

- **Rules 1 and 2**: a card goes behind the row whose last card is the highest one below it.
- **Rule 4**: a card below every row's last card fits no row (``-1``): its owner chooses the
  row to take.
- **Professional**: a card may also go in front of the row whose first card is the lowest one
  above it; the smaller difference wins, and on an equal difference the card goes behind (the
  classic placement). Only a card that fits neither end is a low card.

Pure functions of plain sequences; bots may import them (``referee.rules`` imports nothing
above it).
"""

from __future__ import annotations

from collections.abc import Sequence

LOW = -1
"""The row :func:`placement` and :func:`ascending_row` return for a low card (rule 4)."""

_FAR = 1 << 62
"""Farther than any two cards are apart."""


def ascending_run(card: int, rows: Sequence[Sequence[int]]) -> tuple[int, int]:
    """Rules 1 and 2, and how far the answer holds: ``(row, limit)``.

    ``row`` is the index of the row whose last card is the highest one below ``card``,
    :data:`LOW` (-1) when every row's last card is higher (rule 4). ``limit`` is the lowest
    last card above ``card`` (a number above every card if there is none): every card from
    ``card`` up to ``limit`` goes to the same row, even after cards of the same turn were
    placed, because each of those lies below the later cards too. So a turn's cards, placed in
    ascending order, need a new look-up only when one passes ``limit``.

    A row whose last card is 0 or less takes no card (the board game's stopped or empty rows).
    """
    highest = 0
    found = None
    limit = _FAR
    for row in rows:
        last = row[-1]
        if last < card:
            if last > highest:
                highest = last
                found = row
        elif last < limit:
            limit = last
    # The row is found by identity first; no two rows are equal (every card exists once).
    return (LOW if found is None else rows.index(found)), limit


def ascending_row(card: int, lasts: Sequence[int]) -> int:
    """:func:`ascending_run`'s row, given only the rows' last cards (0 or less: a row that takes none)."""
    return ascending_run(card, [(last,) for last in lasts])[0]


def placement(card: int, rows: Sequence[Sequence[int]], professional: bool = False) -> tuple[int, bool]:
    """Where ``card`` goes on ``rows`` (each from its first card to its last): ``(row, left)``.

    ``row`` is the index of the row, :data:`LOW` (-1) for a low card (rule 4); ``left`` is
    true when the card goes in front of the row's first card, which only the Professional
    option allows: the row end nearest to the card wins, the right end on an equal distance.
    Whether the card takes the row (rule 3) depends on the row's length, which is the
    caller's to compare with the capacity.
    """
    best = ascending_run(card, rows)[0]
    if not professional:
        return best, False
    # The right end found is the nearest one; a left end must be strictly nearer.
    gap = card - rows[best][-1] if best != LOW else _FAR
    left = False
    index = 0
    for row in rows:
        d = row[0] - card
        if 0 < d < gap:
            best, gap, left = index, d, True
        index += 1  # noqa: SIM113 -- a counter is cheaper than enumerate's tuples
    return best, left
