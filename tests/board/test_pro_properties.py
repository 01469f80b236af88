"""Property tests over random pro games with random action cards: tiles and cards conserved,
never more than two stop signs, the events replay to the board, and the game always ends."""

from __future__ import annotations

import random
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from games.board.rules.brettspiel import (
    DEAL,
    ROW,
    ActionCardsReshuffled,
    Brettspiel,
    BrettspielConfig,
    BrettspielState,
    RowOpened,
    RowShifted,
    RowTaken,
    TileAttached,
)
from games.board.rules.brettspiel_attach import put_tile, shift_to_front
from referee.rules.chance import SeededChance
from referee.rules.core import CHANCE, Event, Termination

TAKES = {"take_row", "take_tiles"}
SCARCE = {
    "action_cards_each": 1, "stop_cards": 1, "tile_swap_cards": 1, "skip_cards": 1, "move_to_front_cards": 1,
    "attach_ascending_cards": 1, "one_more_tile_cards": 1,
}  # fmt: skip
"""An action card deck small enough to run out, so that the discard pile is reshuffled."""


def check_conservation(game: Brettspiel, state: BrettspielState) -> None:
    """Every tile is in one place, every action card in a hand or a pile, at most two stop signs."""
    places = Counter[int]()
    for part in (*state.rows, *state.screens, state.supply, state.boxed):
        places.update(t for t in part if t)
    places.update(t for t, _ in state.revealed[state.attached :])
    if state.opening is not None:
        places[state.opening[0]] += 1
    assert places == Counter(game.tiles.numbers)
    cards = Counter(state.action_pile) + Counter(state.discard)
    for hand in state.hands:
        cards.update(hand)
    assert cards == Counter(game.deck)
    assert len(state.stops) <= game.config.stop_signs == 2
    assert all(state.rows[r] for r in state.stops)
    active = sum(1 for r in state.rows if r)
    assert active == game.config.active_rows - (state.phase == ROW)


def check_events(before: BrettspielState, events: tuple[Event, ...], after: BrettspielState) -> None:
    """The placement events, replayed on the rows, give the rows of ``after``."""
    rows = list(before.rows)
    moving = before.opening[0] if before.opening is not None else 0
    for event in events:
        if isinstance(event, TileAttached):
            if event.effect in TAKES:
                moving = event.tile
            else:
                assert event.space >= len(rows[event.row])
                rows[event.row] = put_tile(rows[event.row], event.space, event.tile)
        elif isinstance(event, RowShifted):
            shifted, space = shift_to_front(rows[event.row], event.tile)
            assert space == event.space
            if event.effect in TAKES:
                moving, rows[event.row] = shifted[space], shifted[:space]
            else:
                rows[event.row] = shifted
        elif isinstance(event, RowTaken):
            assert tuple(t for t in rows[event.row] if t) == event.tiles
            rows[event.row] = ()
            assert event.opened == -1
        elif isinstance(event, RowOpened):
            assert event.tile == moving and not rows[event.row]
            rows[event.row] = (event.tile,)
    if before.phase != DEAL:
        assert tuple(rows) == after.rows


def play(game: Brettspiel, seed: int) -> Counter[str]:
    """Play one pro game with random choices, checking every step; returns the events seen."""
    rng = random.Random(seed)
    chance = SeededChance(seed)
    state = game.initial_state()
    track = game.board.track
    seen = Counter[str]()
    luck = (game.config.plus_points_cards, game.config.positive_oxen_cards) if game.config.luck else (0, 0)
    while pending := game.pending(state):
        if pending[0].seat == CHANCE:
            actions = {CHANCE: game.sample_chance(state, chance)}
        else:
            actions = {d.seat: rng.choice(d.options) for d in pending}
        before = state
        state, events = game.apply(state, actions)
        check_conservation(game, state)
        check_events(before, events, state)
        assert all(track.low <= s <= track.high for s in state.scores)
        for card in (0, 1):
            assert state.piles[card] + sum(held[card] for held in state.luck) == luck[card]
        seen.update(type(e).__name__ for e in events)
    outcome = game.outcome(state)
    assert outcome is not None and outcome.scores == state.scores
    assert outcome.termination is Termination.TILES_EXHAUSTED and state.round <= game.config.round_limit
    assert not all(state.screens)
    return seen


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32), players=st.integers(2, 6), luck=st.booleans())
def test_random_pro_games_conserve_tiles_and_cards_and_end(seed: int, players: int, luck: bool) -> None:
    play(Brettspiel(BrettspielConfig(players=players, luck=luck, pro=True)), seed)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32), players=st.integers(2, 6))
def test_a_scarce_deck_is_reshuffled_and_conserved(seed: int, players: int) -> None:
    config = BrettspielConfig(players=players, pro=True, luck=True, plus_points_cards=1, **SCARCE)
    play(Brettspiel(config), seed)


def test_random_games_see_every_pro_event() -> None:
    seen = Counter[str]()
    for seed in range(8):
        config = BrettspielConfig(players=2 + seed % 5, pro=True, luck=seed % 2 == 0, skip_cards=12)
        seen += play(Brettspiel(config), seed)
    scarce = BrettspielConfig(players=6, pro=True, **{**SCARCE, "stop_cards": 2})
    for seed in range(4):
        seen += play(Brettspiel(scarce), seed)
    expected = {
        "ActionCardsDealt", "ActionCardPlayed", "RowShifted", "RowOpened", "StopSignsRemoved", "TileDrawn",
        "ActionCardDrawn", ActionCardsReshuffled.__name__, "LuckCardPlayed", "LuckCardTaken",
    }  # fmt: skip
    assert expected <= set(seen), expected - set(seen)
