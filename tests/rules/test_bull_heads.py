"""Bull heads of the 104 classic cards, and the rules 1–2 helper of the shared card mechanics."""

from __future__ import annotations

import pytest

from referee.rules.cards import BULLS, ascending_row, bull_heads, bull_table

# Every card of the deck, ten to a line, as the rulebooks (003, 004) print them.
BULL_HEADS_TABLE = """
      1-10   1 1 1 1 2 1 1 1 1 3
     11-20   5 1 1 1 2 1 1 1 1 3
     21-30   1 5 1 1 2 1 1 1 1 3
     31-40   1 1 5 1 2 1 1 1 1 3
     41-50   1 1 1 5 2 1 1 1 1 3
     51-60   1 1 1 1 7 1 1 1 1 3
     61-70   1 1 1 1 2 5 1 1 1 3
     71-80   1 1 1 1 2 1 5 1 1 3
     81-90   1 1 1 1 2 1 1 5 1 3
     91-100  1 1 1 1 2 1 1 1 5 3
    101-104  1 1 1 1
"""


def _table() -> dict[int, int]:
    out: dict[int, int] = {}
    for line in BULL_HEADS_TABLE.strip().splitlines():
        span, *heads = line.split()
        first, last = map(int, span.split("-"))
        assert len(heads) == last - first + 1, line
        out.update(zip(range(first, last + 1), map(int, heads), strict=True))
    return out


TABLE = _table()

# The rulebook's categories, spelled out independently of the table.
FIVES = {5, 15, 25, 35, 45, 65, 75, 85, 95}
TENS = {10, 20, 30, 40, 50, 60, 70, 80, 90, 100}
DOUBLES = {11, 22, 33, 44, 66, 77, 88, 99}


def test_the_table_covers_the_whole_deck() -> None:
    assert sorted(TABLE) == list(range(1, 105))


@pytest.mark.parametrize("card", range(1, 105))
def test_every_card_has_its_printed_bull_heads(card: int) -> None:
    assert bull_heads(card) == TABLE[card]
    assert BULLS[card] == TABLE[card]


@pytest.mark.parametrize(
    ("category", "members", "heads"),
    [
        ("ending in 5", FIVES, 2),
        ("multiple of 10", TENS, 3),
        ("double", DOUBLES, 5),
        ("55: a double ending in 5", {55}, 7),
    ],
)
def test_rulebook_categories(category: str, members: set[int], heads: int) -> None:
    assert {card: bull_heads(card) for card in members} == dict.fromkeys(members, heads), category


def test_every_other_card_has_one_bull_head() -> None:
    special = FIVES | TENS | DOUBLES | {55}
    ones = [card for card in range(1, 105) if card not in special]
    assert len(ones) == 76
    assert all(bull_heads(card) == 1 for card in ones)


def test_the_deck_holds_171_bull_heads() -> None:
    assert sum(TABLE.values()) == 171
    assert sum(BULLS) == 171


def test_bull_table_is_indexed_by_card_number() -> None:
    assert len(BULLS) == 105
    assert BULLS[0] == 0
    assert bull_table(34) == BULLS[:35]


@pytest.mark.parametrize(
    ("card", "lasts", "row"),
    [
        (14, (12, 37, 43, 58), 0),  # rule 1: only behind the 12
        (44, (15, 37, 43, 58), 2),  # rule 2: three rows fit, the 43 is closest
        (61, (15, 37, 44, 58), 3),
        (3, (36, 37, 44, 61), -1),  # rule 4: fits no row
        (45, (17, 29, 41, 42), 3),  # the 42 beats the 41
        (104, (1, 2, 3, 103), 3),
    ],
)
def test_ascending_row_applies_rules_1_and_2(card: int, lasts: tuple[int, ...], row: int) -> None:
    assert ascending_row(card, lasts) == row
