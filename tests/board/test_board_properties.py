"""Property tests over random Brettspiel games: tiles and luck cards conserved, four active rows."""

from __future__ import annotations

import random
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from games.board.rules.brettspiel import (
    DEAL,
    Brettspiel,
    BrettspielConfig,
    BrettspielState,
    RowTaken,
    TileAttached,
)
from referee.rules.chance import SeededChance
from referee.rules.core import CHANCE, Event


def check_tiles(game: Brettspiel, state: BrettspielState) -> None:
    """Every tile is in exactly one place: a row, a screen, face up, the supply or the box."""
    places = Counter[int]()
    for part in (*state.rows, *state.screens, state.supply, state.boxed):
        places.update(part)
    places.update(t for t, _ in state.revealed[state.attached :])
    assert places == Counter(game.tiles.numbers)


def check_attaches(
    game: Brettspiel, before: BrettspielState, events: tuple[Event, ...], after: BrettspielState
) -> None:
    """Replaying the attach events on the rows keeps four active rows after each and ends at ``after``."""
    rows = list(before.rows)
    for event in events:
        if isinstance(event, TileAttached):
            assert event.space == len(rows[event.row])
            rows[event.row] += (event.tile,)
            if event.effect != "take_row":
                assert sum(1 for r in rows if r) == game.config.active_rows
        elif isinstance(event, RowTaken):
            *taken, tile = rows[event.row]
            assert tuple(taken) == event.tiles and not rows[event.opened]
            rows[event.row] = ()
            rows[event.opened] = (tile,)
            assert sum(1 for r in rows if r) == game.config.active_rows
    if before.phase != DEAL:
        assert tuple(rows) == after.rows


def play(game: Brettspiel, seed: int) -> int:
    """Play one game with random choices, checking the invariants after every step; returns its steps."""
    rng = random.Random(seed)
    chance = SeededChance(seed)
    state = game.initial_state()
    track = game.board.track
    totals = (game.config.plus_points_cards, game.config.positive_oxen_cards) if game.config.luck else (0, 0)
    steps = 0
    while pending := game.pending(state):
        if pending[0].seat == CHANCE:
            actions = {CHANCE: game.sample_chance(state, chance)}
        else:
            actions = {d.seat: rng.choice(d.options) for d in pending}
        before = state
        state, events = game.apply(state, actions)
        steps += 1
        check_tiles(game, state)
        check_attaches(game, before, events, state)
        assert sum(1 for r in state.rows if r) == game.config.active_rows
        assert all(track.low <= s <= track.high for s in state.scores)
        for card in (0, 1):
            assert state.piles[card] + sum(held[card] for held in state.luck) == totals[card]
        assert len({len(s) for s in state.screens}) == 1
    outcome = game.outcome(state)
    assert outcome is not None and outcome.scores == state.scores
    return steps


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32), players=st.integers(2, 6), luck=st.booleans())
def test_random_games_conserve_tiles_and_keep_four_active_rows(seed: int, players: int, luck: bool) -> None:
    play(Brettspiel(BrettspielConfig(players=players, luck=luck)), seed)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32), luck=st.booleans())
def test_scarce_luck_cards_are_conserved_too(seed: int, luck: bool) -> None:
    game = Brettspiel(BrettspielConfig(players=3, luck=luck, plus_points_cards=1, positive_oxen_cards=2))
    play(game, seed)
