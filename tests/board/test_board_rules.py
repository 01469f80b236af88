"""Brettspiel rules beyond the rulebook's examples: cap, play two, new rows, luck, views, errors."""

from __future__ import annotations

import boardkit
import pytest
from boardkit import of_type, placements, step

from games.board.rules.board import Board, ScoreTrack
from games.board.rules.brettspiel import (
    DEAL,
    OVER,
    Brettspiel,
    BrettspielConfig,
    LuckCardTaken,
    PointsScored,
    RowTaken,
    TilesDealt,
    play_count,
)
from referee.rules.chance import SeededChance
from referee.rules.core import CHANCE, DecisionKind, Termination
from referee.rules.errors import ConfigError, GameOverError, IllegalActionError, NotPendingError

FIVE = [". . . . . T"] * 5
TAKE_FIFTH = [". . . . T", *FIVE[1:]]
"""The first row takes on its fifth tile."""


# -- the score cap --------------------------------------------------------------------------


def test_plus_points_beyond_44_are_lost() -> None:
    game = boardkit.game([". . GG . T", *FIVE[1:]], players=2, oxen={22: 5})
    state = game.position([(20, 21), (50,), (60,), (10,), ()], [(22,), (70,)], scores=[40, 0])
    state, events = step(game, state, {0: 22, 1: 70})
    assert of_type(events, PointsScored) == [PointsScored(0, 10, 4, 44, "green_ox")]
    assert state.scores == (44, 0)


def test_minus_points_beyond_44_are_lost_at_every_change() -> None:
    game = boardkit.game([". . T", ". . R . . T", *FIVE[2:]], players=2, oxen={5: 2, 6: 3, 52: 3})
    state = game.position([(5, 6), (50, 51), (60,), (40,), ()], [(7, 52), (70, 80)], scores=[-40, 0])
    state, events = step(game, state, {0: 7, 1: 70})
    assert of_type(events, PointsScored) == [PointsScored(0, -5, -4, -44, "take_row")]
    state, events = step(game, state, {0: 52, 1: 80})
    assert of_type(events, PointsScored) == [PointsScored(0, -3, 0, -44, "red_ox")]
    assert state.scores == (-44, 0)


# -- the play-two-tiles row ---------------------------------------------------------------------


def test_the_play_two_row_switches_two_tiles_on_when_opened_and_off_when_its_spaces_are_covered() -> None:
    rows = [". . . . . . T", ". . . . . . T", ". . . . . . T", ". . . T", ". D D . T"]
    game = boardkit.game(rows, players=2)
    state = game.position([(10,), (20,), (30,), (40, 41, 42), ()], [(43, 44, 45, 50), (11, 12, 13, 14)])
    assert [d.kind for d in state.pending] == [DecisionKind.CARD] * 2
    # The 43 takes the fourth row and opens the special row below it: two tiles each.
    state, events = step(game, state, {0: 43, 1: 11})
    assert of_type(events, RowTaken)[0].opened == 4
    assert [d.kind for d in state.pending] == [DecisionKind.CARDS] * 2
    assert (44, 45) in state.pending[0].options and len(state.pending[0].options) == 3
    # The 44 and 45 cover both double-tile spaces: back to one tile.
    state, events = step(game, state, {0: (44, 45), 1: (12, 13)})
    assert placements(events) == [(12, 0, 2), (13, 0, 3), (44, 4, 1), (45, 4, 2)]
    assert [d.kind for d in state.pending] == [DecisionKind.CARD] * 2
    assert game.view(state, 0).play_count == 1


def test_the_play_two_row_counts_only_while_active() -> None:
    board = Board.parse([". . . T", ". D D . T", ". . T", ". . T", ". . T"])
    assert play_count(board, [(1,), (), (2,), (3,), (4,)]) == 1
    assert play_count(board, [(1,), (5,), (2,), (3,), ()]) == 2
    assert play_count(board, [(1,), (5, 6), (2,), (3,), ()]) == 2
    assert play_count(board, [(1,), (5, 6, 7), (2,), (3,), ()]) == 1


def test_a_seat_with_one_tile_left_plays_one_while_two_are_due() -> None:
    game = boardkit.game([". D D . T", *FIVE[1:]], players=2)
    state = game.position([(10,), (20,), (30,), (40,), ()], [(50,), (60,)])
    assert play_count(game.board, state.rows) == 2
    assert [d.kind for d in state.pending] == [DecisionKind.CARD] * 2


# -- opening a new row -----------------------------------------------------------------------


def test_a_taken_row_opens_the_next_free_row_below_else_the_topmost_free_row() -> None:
    game = boardkit.game([". . T"] * 6, players=2)
    # Rows 0 and 3 are free; the 42 takes row 2 and opens row 3, the next free one below.
    state = game.position([(), (10,), (40, 41), (), (20,), (30,)], [(42,), (50,)])
    state, events = step(game, state, {0: 42, 1: 50})
    assert [(t.row, t.opened) for t in of_type(events, RowTaken)] == [(2, 3)]
    assert placements(events)[1] == (50, 3, 1)
    # The bottom row is taken: nothing is free below it, so the topmost free row opens.
    state = game.position([(), (10,), (20,), (), (30,), (40, 41)], [(42,), (50,)])
    state, events = step(game, state, {0: 42, 1: 50})
    assert [(t.row, t.opened) for t in of_type(events, RowTaken)] == [(5, 0)]
    assert state.rows == ((42, 50), (10,), (20,), (), (30,), ())


def test_opening_a_row_triggers_its_first_space() -> None:
    game = boardkit.game([". . T", ". . T", ". . T", ". . T", "G . T"], players=2, oxen={9: 3})
    state = game.position([(1, 2), (10,), (20,), (30,), ()], [(9,), (50,)])
    state, events = step(game, state, {0: 9, 1: 50})
    scored = [(p.points, p.reason) for p in of_type(events, PointsScored)]
    assert scored == [(-2, "take_row"), (3, "green_ox")]


# -- luck cards: clovers and piles -------------------------------------------------------------


def test_clovers_count_when_minus_points_move_onto_or_past_them() -> None:
    track = ScoreTrack()
    assert track.clovers_passed(-3, -11) == 2
    assert track.clovers_passed(-3, -5) == 1
    assert track.clovers_passed(-5, -7) == 0
    assert track.clovers_passed(10, -44) == 8
    assert track.clovers_passed(0, -4) == 0


def test_passing_clovers_asks_which_pile_while_both_hold_cards() -> None:
    game = boardkit.game(TAKE_FIFTH, players=2, luck=True, oxen={1: 4, 2: 4})
    state = game.position([(1, 2, 3, 4), (10,), (20,), (30,), ()], [(5, 60), (50, 70)], scores=[-3, 0])
    state, events = step(game, state, {0: 5, 1: 50})
    assert state.scores[0] == -13
    assert [(d.seat, d.kind, d.options) for d in state.pending] == [(0, DecisionKind.PILE, (1, 2))]
    state, events = step(game, state, {0: 1})
    assert of_type(events, LuckCardTaken) == [LuckCardTaken(0, 1)]
    assert state.pending[0].kind is DecisionKind.PILE
    state, events = step(game, state, {0: 2})
    assert state.luck[0] == (1, 1) and state.piles == (7, 7)
    # The 50 was attached after the choices; the round is over.
    assert [d.kind for d in state.pending] == [DecisionKind.CARD] * 2


def test_an_empty_pile_leaves_no_choice_and_empty_piles_give_nothing() -> None:
    game = boardkit.game(
        TAKE_FIFTH, players=2, luck=True, oxen={1: 4, 2: 4}, plus_points_cards=0, positive_oxen_cards=1
    )
    state = game.position([(1, 2, 3, 4), (10,), (20,), (30,), ()], [(5,), (50,)], scores=[-3, 0])
    state, events = step(game, state, {0: 5, 1: 50})
    assert of_type(events, LuckCardTaken) == [LuckCardTaken(0, 2)]
    assert state.luck[0] == (0, 1) and state.piles == (0, 0)
    assert state.phase == OVER


def test_luck_is_asked_only_for_a_card_with_a_legal_use() -> None:
    # "Positive Oxen" only on a row's last space; "5 Plus Points" never there.
    game = boardkit.game(TAKE_FIFTH, players=2, luck=True)
    state = game.position([(1, 2, 3, 4), (10,), (20,), (30,), ()], [(11,), (5,)], luck=[(0, 1), (1, 0)])
    state, _ = step(game, state, {0: 11, 1: 5})
    assert state.phase == OVER


def test_without_luck_cards_no_luck_decision_is_ever_pending() -> None:
    game = boardkit.game(TAKE_FIFTH, players=2)
    state = game.position([(1, 2, 3, 4), (10,), (20,), (30,), ()], [(5,), (11,)])
    state, _ = step(game, state, {0: 5, 1: 11})
    assert state.phase == OVER and state.luck == ((0, 0), (0, 0))


# -- the deal, the second set and the end ------------------------------------------------------


@pytest.mark.parametrize(("players", "sets"), [(2, 2), (3, 2), (4, 1), (6, 1)])
def test_two_or_three_players_draw_a_second_set_from_the_supply(players: int, sets: int) -> None:
    game = Brettspiel(BrettspielConfig(players=players))
    chance = SeededChance(5)
    state = game.initial_state()
    deals = 0
    first_supply: tuple[int, ...] = ()
    while state.phase != OVER:
        if state.phase == DEAL:
            deal = game.sample_chance(state, chance)
            if deals == 1:
                assert isinstance(deal, tuple) and set(deal) <= set(first_supply)
            state, events = game.apply(state, {CHANCE: deal})
            assert of_type(list(events), TilesDealt)[0].tile_set == deals + 1
            assert all(len(screen) == 12 for screen in state.screens)
            first_supply = state.supply
            deals += 1
        else:
            state, _ = game.apply(state, {d.seat: d.options[0] for d in state.pending})
    assert deals == sets
    outcome = game.outcome(state)
    assert outcome is not None and outcome.termination is Termination.TILES_EXHAUSTED


def test_most_points_win_and_ties_share_the_rank() -> None:
    game = boardkit.game(FIVE, players=3)
    state = game.position([(10,), (20,), (30,), (40,), ()], [(11,), (21,), (31,)], scores=[5, 7, 7])
    state, _ = step(game, state, {0: 11, 1: 21, 2: 31})
    outcome = game.outcome(state)
    assert outcome is not None and outcome.ranks == (3, 1, 1) and outcome.winners == (1, 2)
    with pytest.raises(GameOverError):
        game.apply(state, {0: 11})


# -- views ------------------------------------------------------------------------------------------


def test_a_view_shows_only_the_own_screen_and_public_luck_cards() -> None:
    game = boardkit.game(FIVE, players=3, luck=True)
    state = game.position(
        [(10,), (20,), (30,), (40,), ()], [(51, 52), (61, 62), (71, 72)], luck=[(1, 0), (0, 1), (0, 0)]
    )
    view = game.view(state, 1)
    assert view.screen == (61, 62) and view.screen_sizes == (2, 2, 2)
    assert view.luck == ((1, 0), (0, 1), (0, 0))
    shown = view.to_json()
    del shown["board"]
    numbers = set(_ints(shown))
    assert numbers >= {61, 62} and not numbers & {51, 52, 71, 72}
    assert view.decision is not None and view.decision.options == (61, 62)
    with pytest.raises(NotPendingError):
        game.view(state, 3)


def _ints(value: object) -> list[int]:
    if isinstance(value, dict):
        return [i for v in value.values() for i in _ints(v)]
    if isinstance(value, list):
        return [i for v in value for i in _ints(v)]
    return [value] if type(value) is int else []


def test_unseen_tiles_exclude_everything_the_seat_has_seen() -> None:
    game = boardkit.game(FIVE, players=2)
    state = game.position([(10,), (20,), (30,), (40,), ()], [(11, 12), (21, 22)])
    unseen = game.view(state, 0).unseen()
    assert 21 in unseen and 11 not in unseen and 10 not in unseen and len(unseen) == 100 - 6


# -- errors -----------------------------------------------------------------------------------------


def test_illegal_and_missing_actions_are_refused() -> None:
    game = boardkit.game([". D D . T", *FIVE[1:]], players=2)
    state = game.position([(10,), (20,), (30,), (40,), ()], [(11, 12, 13), (21, 22, 23)])
    with pytest.raises(NotPendingError):
        game.apply(state, {0: (11, 12)})
    with pytest.raises(IllegalActionError):
        game.apply(state, {0: 11, 1: (21, 22)})
    with pytest.raises(IllegalActionError):
        game.apply(state, {0: (12, 11), 1: (21, 22)})
    with pytest.raises(IllegalActionError):
        game.apply(state, {0: (11, 21), 1: (21, 22)})
    with pytest.raises(NotPendingError):
        game.sample_chance(state, SeededChance(1))


def test_a_bad_deal_is_refused() -> None:
    game = Brettspiel()
    state = game.initial_state()
    with pytest.raises(IllegalActionError):
        game.apply(state, {CHANCE: tuple(range(1, 52))})
    with pytest.raises(IllegalActionError):
        game.apply(state, {CHANCE: (1,) * 52})


def test_default_actions_are_the_lowest_tiles_and_no_luck_card() -> None:
    game = boardkit.game([". D D . T", *FIVE[1:]], players=2, luck=True)
    state = game.position([(10,), (20,), (30,), (40,), ()], [(13, 11, 12), (21, 22, 23)])
    assert [game.default_action(state, d) for d in state.pending] == [(11, 12), (21, 22)]


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"players": 7}, r"-o players=… must be between 2 and 6"),
        ({"board": "nosuchside"}, "cannot read board 'nosuchside'"),
        ({"board": "../etc"}, "neither a packaged name"),
        ({"tiles_each": 24, "players": 5}, "need 124 tiles"),
        ({"active_rows": 10}, "no free row"),
        ({"board": 3}, r"-o board=… must be a str"),
    ],
)
def test_bad_configs_say_what_is_wrong(config: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        Brettspiel(BrettspielConfig(**config))  # type: ignore[arg-type]


def test_a_position_must_be_sound() -> None:
    game = boardkit.game(FIVE, players=2)
    with pytest.raises(ConfigError, match="exactly 4 active rows"):
        game.position([(10,), (20,), (30,), (), ()], [(11,), (21,)])
    with pytest.raises(ConfigError, match="distinct"):
        game.position([(10,), (20,), (30,), (40,), ()], [(10,), (21,)])
    with pytest.raises(ConfigError, match="scores"):
        game.position([(10,), (20,), (30,), (40,), ()], [(11,), (21,)], scores=[0, 0, 0])
    with pytest.raises(ConfigError, match="scores"):
        game.position([(10,), (20,), (30,), (40,), ()], [(11,), (21,)], scores=[45, 0])
    with pytest.raises(ConfigError, match="same number of tiles"):
        game.position([(10,), (20,), (30,), (40,), ()], [(11, 12), (21,)])
    with pytest.raises(ConfigError, match="last space"):
        game.position([(10, 11, 12, 13, 14, 15), (20,), (30,), (40,), ()], [(1,), (21,)])
