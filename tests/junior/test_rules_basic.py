"""Rules 1 and 2 of the basic game (also the advanced game's), as tables in the compact notation."""

from __future__ import annotations

import pytest

from games.junior.rules.junior import JuniorAdvanced, JuniorAdvancedConfig, JuniorBasic
from referee.rules import CHANCE

from .notation import Cards

# name, rows, card, legal rows
LEGAL_ROWS = [
    ("rule 1: a new cow everywhere", "A / G / I / J", "S", (0, 1, 2, 3)),
    ("rule 1: not where the cow is", "A / S / I / J", "S", (0, 2, 3)),
    ("rule 1: not where the cow is, twice", "A S / S / I / J G", "S", (2, 3)),
    ("rule 1: one new cow of two is enough", "A G / A / G / A G I", "AG", (1, 2)),
    ("rule 1: one new cow of three is enough", "A G I / A G / G I J / A I", "AGI", (1, 2, 3)),
    ("rule 1: an empty row adds every cow", "A / . / A / A", "A", (1,)),
    ("rule 1: every row empty", ". / . / . / .", "J", (0, 1, 2, 3)),
    ("rule 2: the cow is in every row", "S / A S / S G / I S", "S", (0, 1, 2, 3)),
    ("rule 2: both cows in every row", "A G / G A I / A J G / N G A", "AG", (0, 1, 2, 3)),
    ("rule 2 needs every row: in one row only is rule 1", "S / A / G / I", "S", (1, 2, 3)),
    ("rule 2 needs every row: three of four rows", "S / A S / S G / I", "S", (3,)),
]


@pytest.mark.parametrize(("name", "rows", "card", "legal"), LEGAL_ROWS, ids=[row[0] for row in LEGAL_ROWS])
def test_legal_rows_of_the_basic_game(name: str, rows: str, card: str, legal: tuple[int, ...]) -> None:
    game = JuniorBasic()
    cards = Cards(game.deck)
    state = game.position(cards.rows(rows))
    drawn = cards.card(card)
    assert game.rows_for(state.rows, drawn) == legal

    state, _ = game.apply(state, {CHANCE: drawn})

    if len(legal) > 1:
        assert game.pending(state)[0].options == legal
    else:  # a single legal row is the engine's to take: nobody is asked
        assert state.rows[legal[0]][-1:] == (drawn,) or state.collected[0][-1:] == (drawn,)


@pytest.mark.parametrize(("name", "rows", "card", "legal"), LEGAL_ROWS, ids=[row[0] for row in LEGAL_ROWS])
def test_the_advanced_game_uses_the_same_rules(
    name: str, rows: str, card: str, legal: tuple[int, ...]
) -> None:
    game = JuniorAdvanced(JuniorAdvancedConfig(players=2))
    cards = Cards(game.deck)
    played = cards.card(card)
    state = game.position(cards.rows(rows), [[played, *cards.cards("N N")], cards.cards("N N N")])
    options = game.pending(state)[0].options
    assert tuple(row for card_, row in options if card_ == played) == legal  # type: ignore[misc]


# name, rows, card, row, cards collected
COMPLETIONS = [
    ("the sixth cow completes", "A G I J N / . / . / .", "S", 0, 6),
    ("a two-cow card completes", "A G I J / . / . / .", "NS", 0, 5),
    ("a long row completes", "A A G G I J N N / . / . / .", "S", 0, 9),
    ("one cow short is not full", "A G I J / . / . / .", "N", 0, 0),
    ("only the row it completes", "A G I J N / . / . / .", "S", 1, 0),
]


@pytest.mark.parametrize(
    ("name", "rows", "card", "row", "taken"), COMPLETIONS, ids=[row[0] for row in COMPLETIONS]
)
def test_a_row_is_collected_exactly_when_it_shows_all_six_cows(
    name: str, rows: str, card: str, row: int, taken: int
) -> None:
    game = JuniorBasic()
    cards = Cards(game.deck)
    state = game.position(cards.rows(rows))
    drawn = cards.card(card)
    assert game.takes(state.rows, drawn, row) == taken
    before = state.rows[row]

    state, _ = game.apply(state, {CHANCE: drawn})
    if game.pending(state)[0].seat == 0:
        state, _ = game.apply(state, {0: row})

    assert len(state.collected[0]) == taken
    assert state.rows[row] == (() if taken else (*before, drawn))
