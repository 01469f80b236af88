"""Property tests over random games of every mode: cards, collected rows, turn order, the end."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from games.junior.rules.junior import (
    CardPlaced,
    CardPlayed,
    CardTurned,
    GameEnded,
    Junior,
    JuniorState,
    RowCollected,
    matching_rows,
    row_mask,
)
from referee.rules import CHANCE, make_variant

from .games import random_steps

MODES: dict[str, tuple[str, dict[str, Any]]] = {
    "basic": ("junior-basic", {}),
    "advanced": ("junior-advanced", {}),
    "nuisance": ("junior-advanced", {"nuisance": True}),
    "experts": ("junior-experts", {}),
}

games = st.builds(
    lambda mode, players: make_variant(MODES[mode][0], {"players": players, **MODES[mode][1]}),
    st.sampled_from(sorted(MODES)),
    st.integers(2, 6),
)
seeds = st.integers(0, 2**64)
SETTINGS = settings(max_examples=40, deadline=None)


def all_cards(state: JuniorState) -> list[int]:
    parts = [*state.rows, *state.hands, state.pile, *state.collected]
    return sorted([c for part in parts for c in part] + ([] if state.card is None else [state.card]))


@SETTINGS
@given(games, seeds)
def test_all_52_cards_are_accounted_for_at_every_step(game: Junior[Any], seed: int) -> None:
    assert len(game.deck) == 52
    assert all_cards(game.initial_state()) == list(range(52))
    for _, _, _, after, _ in random_steps(game, seed):
        assert all_cards(after) == list(range(52))


@SETTINGS
@given(games, seeds)
def test_a_collected_row_really_was_full(game: Junior[Any], seed: int) -> None:
    """Basic and advanced: all six cows. Experts: six cards with the played one, or no match anywhere."""
    masks, full = game.deck.masks, game.deck.full
    for before, _, _, _, events in random_steps(game, seed):
        rows = list(before.rows)  # one step may hold several forced turns: follow the events
        for i, event in enumerate(events):
            if isinstance(event, CardPlaced):
                rows[event.row] = (*rows[event.row], event.card)
            if not isinstance(event, RowCollected):
                continue
            if game.mode != "experts":
                placed = events[i - 1]
                assert isinstance(placed, CardPlaced) and event.cards == rows[event.row]
                assert row_mask(masks, event.cards) == full
                assert all(row_mask(masks, event.cards[:k]) != full for k in range(len(event.cards)))
            else:
                placed = events[i + 1]
                assert isinstance(placed, CardPlaced) and placed.row == event.row
                assert event.cards == rows[event.row]
                if matching_rows(masks, tuple(rows), placed.card):
                    assert len(event.cards) + 1 == 6
                    assert masks[event.cards[-1]] & masks[placed.card]
            rows[event.row] = ()


@SETTINGS
@given(games, seeds)
def test_the_game_ends_exactly_when_the_rulebook_says(game: Junior[Any], seed: int) -> None:
    """Basic: once the last card is drawn and placed. Else: the pile drawn and every hand played."""
    placed = 0
    last: JuniorState | None = None
    for _, _, _, after, events in random_steps(game, seed):
        placed += sum(1 for e in events if isinstance(e, CardPlaced))
        cards_left = bool(after.pile) or any(after.hands) or after.card is not None
        assert bool(game.pending(after)) == cards_left
        assert (game.outcome(after) is None) == cards_left
        assert any(isinstance(e, GameEnded) for e in events) == (not cards_left)
        last = after
    assert last is not None
    outcome = game.outcome(last)
    assert outcome is not None
    starters = game.config.rows if game.mode == "experts" else 0
    assert placed == 52 - starters  # every card was played (or turned over) exactly once
    assert outcome.scores == tuple(len(album) for album in last.collected)
    assert sum(outcome.scores) + sum(map(len, last.rows)) == 52


TURN_EVENT = {"basic": CardTurned, "advanced": CardPlaced, "experts": CardPlayed}
"""The event that happens once per turn in each mode."""


@SETTINGS
@given(games, seeds)
def test_turns_go_clockwise_from_seat_0_and_only_real_choices_are_asked(game: Junior[Any], seed: int) -> None:
    turns: list[int] = []
    for before, decision, _, after, events in random_steps(game, seed):
        if decision.seat != CHANCE:
            assert decision.seat == before.seat
            assert len(decision.options) >= 2  # a single option is made by the engine
        turns += [e._asdict()["seat"] for e in events if isinstance(e, TURN_EVENT[game.mode])]
        if game.mode != "basic":
            assert all(len(hand) <= game.config.hand_size for hand in after.hands)
    n = game.config.players
    assert turns == [i % n for i in range(len(turns))]
    assert len(turns) == 52 - (game.config.rows if game.mode == "experts" else 0)


@SETTINGS
@given(games, seeds)
def test_ranks_follow_the_mode(game: Junior[Any], seed: int) -> None:
    *_, (_, _, _, last, _) = random_steps(game, seed)
    outcome = game.outcome(last)
    assert outcome is not None
    best = (min if game.fewest_wins else max)(outcome.scores)
    assert outcome.winners == tuple(s for s, score in enumerate(outcome.scores) if score == best)
    assert game.higher_is_better is not game.fewest_wins
