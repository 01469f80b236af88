"""A plain, slow reference of one classic turn (rules 1–4 and the Professional option).

Written from the rulebooks, independently of the engine, to check the engine's optimized
placement against: every card goes, lowest first, to the row end with the smallest difference
(the right end of a row whose last card is lower; under Professional also the left end of a
row whose first card is higher, the right end winning a tie); a sixth card takes the row; a
card that fits nowhere takes the row its owner chooses.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import NamedTuple


class Placed(NamedTuple):
    """What happened to one card of the turn (the fields of the engine's ``CardPlaced``)."""

    seat: int
    card: int
    row: int
    left: bool
    taken: tuple[int, ...]


def play_turn(
    rows: Sequence[Sequence[int]],
    plays: Mapping[int, int],
    choices: Iterator[int],
    *,
    capacity: int,
    professional: bool,
) -> tuple[tuple[tuple[int, ...], ...], list[Placed]]:
    """The rows after the turn and each card's placement, in placement order."""
    table = [list(row) for row in rows]
    placed: list[Placed] = []
    for card, seat in sorted((card, seat) for seat, card in plays.items()):
        ends = []
        for index, row in enumerate(table):
            if row[-1] < card:
                ends.append((card - row[-1], 0, index))
            if professional and row[0] > card:
                ends.append((row[0] - card, 1, index))
        if not ends:
            index = next(choices)
            taken, table[index] = tuple(table[index]), [card]
            placed.append(Placed(seat, card, index, False, taken))
            continue
        _, left, index = min(ends)
        row = table[index]
        if len(row) >= capacity:
            taken, table[index] = tuple(row), [card]
        else:
            taken = ()
            row.insert(0, card) if left else row.append(card)
        placed.append(Placed(seat, card, index, bool(left), taken))
    return tuple(tuple(row) for row in table), placed
