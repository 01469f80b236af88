"""The Anniversary variant's special cards and the table mechanics they change.

Pure helpers shared by the engine (:mod:`games.anniversary.rules.anniversary`) and its bots: where a
number card goes on a table with blocked rows and "7 nimmt!" rows, which special cards have a
use right now, and which cards "Negative = Positive" sets aside. Placement by the smallest
difference is classic's :func:`~referee.rules.cards.ascending_row`, not a copy of it.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import NamedTuple

from referee.rules.cards import ascending_row, bull_heads

_ABOVE_ALL = 1 << 62
"""Higher than any card: a blocked row's last card as rules 1 and 2 see it."""


class Special(enum.IntEnum):
    """The seven kinds of special card (four of each in the box); the value is the action code."""

    FIFTH_ROW = 1
    """5th Row: the played card starts a new row instead of being placed; ``(1,)``."""
    SEVEN_NIMMT = 2
    """7 nimmt!: the card goes sixth into the full row it would take; ``(2,)``."""
    INSERT = 3
    """Insert: the card goes into ``row`` where the row stays ascending; ``(3, row)``."""
    REPLACE = 4
    """Replace: the played card goes back to the hand, ``card`` from the hand is placed; ``(4, card)``."""
    SHIFT = 5
    """Shift: move ``card`` of the table into ``row``, ascending, before placing; ``(5, card, row)``."""
    NEGATIVE_POSITIVE = 6
    """Negative = Positive: at a take, ``card``'s bull heads count as plus points; ``(6, card)``."""
    BLOCK = 7
    """Block: no number card may join ``row`` until another row is taken; ``(7, row)``."""


SWAP = 0
"""The action code of swapping a special card when you take a row: ``(0, kind)``."""

PASS: tuple[int, ...] = ()
"""Play no special card (or swap none)."""

KINDS: tuple[Special, ...] = tuple(Special)
"""Every kind, in action-code order."""


class Table(NamedTuple):
    """The rows as the placement rules see them."""

    rows: tuple[tuple[int, ...], ...]
    blocked: tuple[bool, ...]
    """Rows a "Block" card closes: no number card joins them, a low card cannot take them."""
    sevens: tuple[bool, ...]
    """Rows that hold a "7 nimmt!" card: they take one more card before they are full."""


def capacity_of(table: Table, row: int, capacity: int) -> int:
    """How many number cards ``row`` holds before the next card takes it."""
    return capacity + 1 if table.sevens[row] else capacity


def target_row(table: Table, card: int) -> int:
    """Rules 1 and 2 over the open rows: the row ``card`` goes behind, or -1 for a low card."""
    lasts = [_ABOVE_ALL if shut else row[-1] for row, shut in zip(table.rows, table.blocked, strict=True)]
    return ascending_row(card, lasts)


def open_rows(table: Table) -> tuple[int, ...]:
    """The rows that are not blocked (a low card chooses among them)."""
    return tuple(r for r, blocked in enumerate(table.blocked) if not blocked)


def insert_position(row: Sequence[int], card: int) -> int:
    """Where ``card`` goes into ``row`` so that it stays ascending (0: the front)."""
    position = 0
    while position < len(row) and row[position] < card:
        position += 1
    return position


def row_heads(row: Sequence[int]) -> int:
    """The bull heads in a row of number cards."""
    return sum(bull_heads(card) for card in row)


def placement_cost(table: Table, card: int, capacity: int) -> int:
    """The bull heads ``card`` takes if it is placed now without special cards.

    A low card takes the open row with the fewest bull heads (what a sensible player picks).
    """
    row = target_row(table, card)
    if row < 0:
        return min(row_heads(table.rows[r]) for r in open_rows(table))
    if len(table.rows[row]) >= capacity_of(table, row, capacity):
        return row_heads(table.rows[row])
    return 0


def special_options(
    table: Table,
    card: int,
    hand: Sequence[int],
    held: Sequence[int],
    *,
    capacity: int,
    max_rows: int,
) -> tuple[tuple[int, ...], ...]:
    """Every special card ``held`` can be played with, and its targets, before ``card`` is placed.

    ``hand`` is the number cards still in the owner's hand (what "Replace" can bring in).
    "Negative = Positive" is not among them: it is played when a row is taken.
    """
    options: list[tuple[int, ...]] = []
    kinds = set(held)
    rows = table.rows
    free = [
        r
        for r in range(len(rows))
        if not table.blocked[r] and not table.sevens[r] and len(rows[r]) < capacity
    ]
    if Special.FIFTH_ROW in kinds and len(rows) < max_rows:
        options.append((Special.FIFTH_ROW,))
    if Special.SEVEN_NIMMT in kinds:
        goes = target_row(table, card)
        if goes >= 0 and not table.sevens[goes] and len(rows[goes]) >= capacity:
            options.append((Special.SEVEN_NIMMT,))
    if Special.INSERT in kinds:
        options.extend((Special.INSERT, r) for r in free)
    if Special.REPLACE in kinds:
        options.extend((Special.REPLACE, other) for other in sorted(hand))
    if Special.SHIFT in kinds:
        for source, row in enumerate(rows):
            if table.sevens[source] or len(row) < 2:
                continue
            for moved in row:
                options.extend((Special.SHIFT, moved, r) for r in free if r != source)
    if Special.BLOCK in kinds:
        unblocked = open_rows(table)
        if len(unblocked) >= 2:
            options.extend((Special.BLOCK, r) for r in unblocked)
    return tuple(sorted(tuple(map(int, option)) for option in options))


def take_options(
    taken: Sequence[int], held: Sequence[int], *, negative_positive: bool, swap: bool
) -> tuple[tuple[int, ...], ...]:
    """What a seat that just took ``taken`` may do: "Negative = Positive" on one of them, a swap."""
    options: list[tuple[int, ...]] = []
    if negative_positive and Special.NEGATIVE_POSITIVE in held:
        options.extend((Special.NEGATIVE_POSITIVE, card) for card in sorted(set(taken)))
    if swap:
        options.extend((SWAP, kind) for kind in sorted(set(held)))
    return tuple(tuple(map(int, option)) for option in options)


def most_heads(cards: Sequence[int], budget: int) -> tuple[int, ...]:
    """The cards worth the most bull heads, at most ``budget``, among ``cards`` (ascending).

    Ties go to fewer cards, then to the higher cards; the answer is the same for the same
    cards in any order.
    """
    # best[s]: the best subset found with exactly s heads, as (card count, cards descending).
    best: list[tuple[int, tuple[int, ...]] | None] = [None] * (budget + 1)
    best[0] = (0, ())
    for card in sorted(cards, reverse=True):
        heads = bull_heads(card)
        for total in range(budget, heads - 1, -1):
            before = best[total - heads]
            if before is None:
                continue
            candidate = (before[0] + 1, tuple(sorted((*before[1], card), reverse=True)))
            current = best[total]
            if current is None or _better(candidate, current):
                best[total] = candidate
    for total in range(budget, -1, -1):
        found = best[total]
        if found is not None:
            return tuple(sorted(found[1]))
    return ()


def _better(a: tuple[int, tuple[int, ...]], b: tuple[int, tuple[int, ...]]) -> bool:
    """Fewer cards first, then the higher cards."""
    return a[0] < b[0] or (a[0] == b[0] and a[1] > b[1])


def set_aside(
    chosen: int, taken: Sequence[int], earlier: Sequence[int], *, row_first: bool
) -> tuple[int, ...]:
    """The cards "Negative = Positive" on ``chosen`` removes from the taker's pile.

    ``chosen`` counts its bull heads as plus points; it is set aside with cards worth up to that
    many heads. ``taken`` is the row just taken (``chosen`` among them), ``earlier`` the pile
    before the take. With ``row_first`` (the edition's example), the plus points cancel the other
    taken cards first (the most heads they cover among them) and what is left cancels earlier
    cards, also when they cannot cover the whole row; otherwise the most heads the plus points
    cover among all of them.
    """
    plus = bull_heads(chosen)
    others = list(taken)
    others.remove(chosen)
    if row_first:
        paid = most_heads(others, plus)  # the whole row when the plus points cover it
        removed = (*paid, *most_heads(earlier, plus - row_heads(paid)))
    else:
        removed = most_heads([*others, *earlier], plus)
    return tuple(sorted((chosen, *removed)))
