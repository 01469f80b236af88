"""The rulebook's examples (seeds/000_…), each set up in the compact notation of ``notation.py``."""

from __future__ import annotations

from games.junior.rules.junior import (
    CardPlaced,
    CardPlayed,
    CardTurned,
    JuniorBasic,
    JuniorExperts,
    JuniorExpertsConfig,
    RowCollected,
)
from referee.rules import CHANCE, DecisionKind

from .notation import Cards, spell_rows


def test_ole_places_his_scottish_cow_on_the_first_row() -> None:
    """Ole can place his Scottish cow at the first, third or fourth row, not the second."""
    game = JuniorBasic()
    cards = Cards(game.deck)
    state = game.position(cards.rows("A G / I S J / N / G I"), seat=1)
    scottish = cards.card("S")

    state, events = game.apply(state, {CHANCE: scottish})

    assert events == (CardTurned(1, scottish),)
    (decision,) = game.pending(state)
    assert decision.seat == 1 and decision.kind is DecisionKind.ROW
    assert decision.options == (0, 2, 3)

    state, events = game.apply(state, {1: 0})  # "Ole decides on the first row."
    assert events == (CardPlaced(1, scottish, 0),)
    assert spell_rows(game.deck, state.rows) == "A G S / I S J / N / G I"
    assert game.pending(state)[0].seat == CHANCE and state.seat == 2


def test_bruno_completes_the_second_row_and_collects_it() -> None:
    """Bruno places his cow card in the second row and completes it: he collects all its cards."""
    game = JuniorBasic()
    cards = Cards(game.deck)
    rows = cards.rows("A / G I A N J / S / .")
    second_row = rows[1]
    state = game.position(rows, seat=0, collected=[cards.cards("A G"), (), (), ()])
    bruno_card = cards.card("S")

    state, _ = game.apply(state, {CHANCE: bruno_card})
    assert game.pending(state)[0].options == (0, 1, 3)  # the third row already has a Galloway

    state, events = game.apply(state, {0: 1})

    collected = (*second_row, bruno_card)
    assert events == (CardPlaced(0, bruno_card, 1), RowCollected(0, 1, collected, 2 + 6))
    assert state.collected[0][-6:] == collected
    assert state.rows[1] == ()  # "Into the freed-up row you may now place new cow cards again."
    assert game.rows_for(state.rows, cards.card("A")) == (1, 2, 3)  # the emptied row takes any card


def test_swantje_can_place_the_japanese_cow_only_at_the_third_row() -> None:
    """Only the third row's last card shows a Japanese cow, so the card goes there, unasked."""
    game = JuniorExperts()
    cards = Cards(game.deck)
    rows = cards.rows("J A / A J G / N J / I")  # only the third row ends in a J card
    japanese = cards.card("J")
    hands = cards.hands("A S G / N S / G I N / A N I")
    hands[1].append(japanese)
    state = game.position(rows, hands, seat=1)
    assert game.rows_for(state.rows, japanese) == (2,)

    state, events = game.apply(state, {1: japanese})

    assert events == (CardPlayed(1, japanese), CardPlaced(1, japanese, 2))
    assert spell_rows(game.deck, state.rows) == "J A / A J G / N J J / I"
    assert game.pending(state)[0].seat == CHANCE  # Swantje draws at the end of her turn


def test_experts_no_matching_card_collects_the_chosen_row() -> None:
    """No row's last card shares a cow: the seat chooses any row, collects it, the card starts it."""
    game = JuniorExperts(JuniorExpertsConfig(players=2))
    cards = Cards(game.deck)
    rows = cards.rows("A G / G G I / N / J")
    galloway = cards.card("S")
    state = game.position(rows, [[galloway, *cards.cards("A A")], cards.cards("G I N")], seat=0)

    state, events = game.apply(state, {0: galloway})
    (decision,) = game.pending(state)
    assert decision.kind is DecisionKind.ROW and decision.options == (0, 1, 2, 3)
    taken = state.rows[1]

    state, events = game.apply(state, {0: 1})

    assert events == (RowCollected(0, 1, taken, 3), CardPlaced(0, galloway, 1))
    assert spell_rows(game.deck, state.rows) == "A G / S / N / J"


def test_experts_sixth_card_collects_the_other_five() -> None:
    """Placing the sixth card in a row collects the other five; the card starts the row anew."""
    game = JuniorExperts(JuniorExpertsConfig(players=2))
    cards = Cards(game.deck)
    rows = cards.rows("A A A A A / G / I / J")
    zebu = cards.card("A")
    state = game.position(rows, [[zebu, *cards.cards("S S")], cards.cards("G N N")], seat=0)

    state, events = game.apply(state, {0: zebu})

    assert events == (CardPlayed(0, zebu), RowCollected(0, 0, tuple(rows[0]), 5), CardPlaced(0, zebu, 0))
    assert state.rows[0] == (zebu,)
