"""A compact text notation for classic 6 nimmt! positions in tests.

- cards:      ``"14 15 44 61"``                  → ``(14, 15, 44, 61)``; ``""`` or ``"-"`` is empty
- groups:     ``"12 14 15 | 37 | 43 44 | 58 61"`` → one group per row (top to bottom) or per seat
- numbers:    ``"0 0 6 0"``                      → bull heads per seat
- placements: ``"21>0 26>0 30>0! 36>0"``         → card ``>`` row index (0-based, as the engine
  counts; the rulebook's "second row" is row 1); ``!`` marks a card that took the row
  (rule 3 or 4), ``<`` instead of ``>`` a card put on the row's left end (Professional)
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import NamedTuple

Group = tuple[int, ...]


def cards(text: str) -> Group:
    """Card numbers separated by blanks."""
    text = text.strip()
    if text in ("", "-"):
        return ()
    return tuple(int(word) for word in text.split())


def groups(text: str) -> tuple[Group, ...]:
    """Groups of cards separated by ``|``: rows of the table or hands of the seats."""
    return tuple(cards(part) for part in text.split("|"))


rows = groups
hands = groups
numbers = cards


def show(parts: Iterable[Sequence[int]]) -> str:
    """The inverse of :func:`groups`, for readable failure messages."""
    return " | ".join(" ".join(map(str, part)) if part else "-" for part in parts)


class Placement(NamedTuple):
    """Where one card went: its row, which end, and whether it took the row."""

    card: int
    row: int
    left: bool
    took: bool


_PLACEMENT = re.compile(r"^(\d+)([<>])(\d+)(!?)$")


def placements(text: str) -> tuple[Placement, ...]:
    """Parse ``"21>0 26>0 30>0! 36>0"`` (see the module docstring)."""
    out = []
    for word in text.split():
        match = _PLACEMENT.match(word)
        if match is None:
            raise ValueError(f"not a placement: {word!r} (expected e.g. '30>0!' or '5<2')")
        card, end, row, took = match.groups()
        out.append(Placement(int(card), int(row), end == "<", took == "!"))
    return tuple(out)


def show_placements(items: Iterable[Placement]) -> str:
    """The inverse of :func:`placements`."""
    return " ".join(f"{p.card}{'<' if p.left else '>'}{p.row}{'!' if p.took else ''}" for p in items)
