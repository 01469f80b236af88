"""The pro version beyond the rulebook's examples: set-up, the red side's spaces, every action
card's limits, the end and its scoring, views, defaults and errors."""

from __future__ import annotations

import boardkit
import pytest
from boardkit import of_type, placements, step

from games.board.rules.board import load_board
from games.board.rules.brettspiel import (
    DRAW,
    OVER,
    ActionCard,
    ActionCardDrawn,
    ActionCardsDealt,
    ActionCardsReshuffled,
    Brettspiel,
    BrettspielConfig,
    PointsScored,
    RowOpened,
    RowShifted,
    RowTaken,
    StopSignsRemoved,
    TileDrawn,
)
from referee.rules.chance import SeededChance
from referee.rules.core import CHANCE, Decision, DecisionKind, Termination
from referee.rules.errors import ConfigError, IllegalActionError

STOP, SWAP, SKIP, FRONT, ASCENDING, ONE_MORE = (int(card) for card in ActionCard)
PLAIN = [". . . . . . . T"] * 6
ROWS = [(10,), (20,), (30,), (40,), (), ()]


def kinds(state_pending: tuple[Decision, ...]) -> list[tuple[int, DecisionKind]]:
    return [(d.seat, d.kind) for d in state_pending]


# -- set-up ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("players", "first"), [(2, 0), (3, 0), (4, 6), (6, 6)])
def test_the_setup_opens_the_top_four_rows_with_two_or_three_players_else_the_bottom_four(
    players: int, first: int
) -> None:
    game = Brettspiel(BrettspielConfig(players=players, pro=True))
    assert game.board == load_board("red") and game.board.side == "red"
    start = game.initial_state()
    state, events = game.apply(start, {CHANCE: game.sample_chance(start, SeededChance(players))})
    assert [r for r, row in enumerate(state.rows) if row] == list(range(first, first + 4))
    assert all(len(screen) == 12 for screen in state.screens)
    assert all(len(hand) == 2 for hand in state.hands)
    assert len(state.action_pile) == 36 - 2 * players
    assert len(state.supply) == 100 - 4 - 12 * players
    assert of_type(list(events), ActionCardsDealt) == [ActionCardsDealt(2, 36 - 2 * players)]


def test_the_basic_game_refuses_the_red_side_and_the_pro_version_plays_the_blue_one() -> None:
    with pytest.raises(ConfigError, match=r"basic game.*no draw_action_card, draw_tile, take_tiles spaces"):
        Brettspiel(BrettspielConfig(board="red"))
    assert Brettspiel(BrettspielConfig(pro=True, board="blue")).board.side == "blue"


# -- take row: tiles and ox ------------------------------------------------------------------------------


def test_take_row_tiles_puts_the_tiles_behind_the_screen_and_the_player_opens_any_other_free_row() -> None:
    rows = [". . TT", ". . T", *PLAIN[2:]]
    game = boardkit.game(rows, pro=True, players=2, oxen={10: 3, 11: 5})
    state = game.position([(10, 11), (20,), (30,), (40,), (), ()], [(12, 50), (60, 70)], stops=[2])
    state, events = step(game, state, {0: 12, 1: 60})
    assert of_type(events, RowTaken) == [RowTaken(0, 0, (10, 11), 8, -1)]
    assert not of_type(events, PointsScored)
    assert of_type(events, StopSignsRemoved) == [StopSignsRemoved((2,))] and state.stops == ()
    assert state.screens[0] == (10, 11, 50)
    assert state.pending == (Decision(0, DecisionKind.ROW, (4, 5)),)
    view = game.view(state, 0)
    assert view.phase == "row" and view.opening == (12, 0)
    assert game.default_action(state, state.pending[0]) == 4
    state, events = step(game, state, {0: 5})
    assert of_type(events, RowOpened) == [RowOpened(0, 12, 5, "plain")]
    assert state.rows[:6] == ((), (20,), (30,), (40, 60), (), (12,))


def test_take_row_ox_scores_minus_points_and_the_new_row_triggers_its_first_space() -> None:
    rows = [". . T", ". . T", ". . T", ". . T", ". . T", "G . T"]
    game = boardkit.game(rows, pro=True, players=2, oxen={12: 2})
    state = game.position([(10, 11), (20,), (30,), (40,), (), ()], [(12, 50), (60, 70)])
    state, events = step(game, state, {0: 12, 1: 60})
    assert [(p.points, p.reason) for p in of_type(events, PointsScored)] == [(-2, "take_row")]
    state, events = step(game, state, {0: 5})
    assert [(p.points, p.reason) for p in of_type(events, PointsScored)] == [(2, "green_ox")]
    assert state.boxed == (10, 11)


def test_a_single_free_row_is_opened_without_asking() -> None:
    game = boardkit.game([". . T", ". . T", ". . T", ". . T", ". . T"], pro=True, players=2)
    state = game.position([(10, 11), (20,), (30,), (40,), ()], [(12, 50), (60, 70)])
    state, events = step(game, state, {0: 12, 1: 60})
    assert of_type(events, RowOpened) == [RowOpened(0, 12, 4, "plain")]
    assert state.pending[0].kind is DecisionKind.CARD


# -- draw spaces -------------------------------------------------------------------------------------------


def test_draw_tile_draws_from_the_supply_by_chance_behind_the_screen() -> None:
    game = boardkit.game([". +t . T", *PLAIN[1:]], pro=True, players=2)
    state = game.position([(10,), (20,), (30,), (40,), (), ()], [(11, 50), (60, 70)])
    state, events = step(game, state, {0: 11, 1: 60})
    assert state.phase == DRAW and kinds(state.pending) == [(CHANCE, DecisionKind.CHANCE)]
    tile = game.sample_chance(state, SeededChance(3))
    assert tile in state.supply
    with pytest.raises(IllegalActionError):
        game.apply(state, {CHANCE: 11})
    state, events = step(game, state, {CHANCE: tile})
    assert of_type(events, TileDrawn) == [TileDrawn(0)] and tile not in state.supply
    assert state.screens[0] == tuple(sorted((50, tile)))
    # The event says who drew, never which tile.
    assert all(tile not in e for e in events if isinstance(e, TileDrawn))


def test_draw_action_card_reshuffles_the_discard_pile_when_the_pile_is_empty() -> None:
    game = boardkit.game(
        [". +a . T", *PLAIN[1:]], pro=True, players=2, action_cards_each=1, stop_cards=1, tile_swap_cards=1,
        skip_cards=1, move_to_front_cards=0, attach_ascending_cards=0, one_more_tile_cards=0,
    )  # fmt: skip
    rows = [(10,), (20,), (30,), (40,), (), ()]
    state = game.position(rows, [(11, 50), (60, 70)], action_cards=[[], [STOP]], discard=[SWAP, SKIP])
    assert state.action_pile == ()
    state, events = step(game, state, {0: 11, 1: 60})
    assert of_type(events, ActionCardsReshuffled) == [ActionCardsReshuffled(2)]
    assert state.phase == DRAW and state.action_pile == (SWAP, SKIP) and state.discard == ()
    state, events = step(game, state, {CHANCE: SKIP})
    assert of_type(events, ActionCardDrawn) == [ActionCardDrawn(0)]
    assert state.hands == ((SKIP,), (STOP,)) and state.action_pile == (SWAP,)


def test_an_empty_supply_or_empty_piles_draw_nothing() -> None:
    game = boardkit.game([". +a . +t T", *PLAIN[1:]], pro=True, players=2, action_cards_each=0, stop_cards=1,
                         tile_swap_cards=0, skip_cards=0, move_to_front_cards=0, attach_ascending_cards=0,
                         one_more_tile_cards=0)  # fmt: skip
    state = game.position(ROWS, [(11, 50), (60, 70)], action_cards=[[], [STOP]])
    state, events = step(game, state, {0: 11, 1: 60})
    # The pile and the discard pile are empty: the 11 draws nothing; seat 1 may play its Stop!.
    assert not of_type(events, ActionCardDrawn) and kinds(state.pending) == [(1, DecisionKind.ACTION_CARD)]
    state, events = step(game, state, {1: ()})
    # Every tile is dealt: the 12 lands on "Draw Tile" with nothing to draw.
    rows = [(10, 11, 12), (20,), (30,), (40,), (), ()]
    low = tuple(t for t in range(1, 40) if t not in {10, 11, 12, 20, 30})
    state = game.position(rows, [low, tuple(range(41, 101))])
    state, events = step(game, state, {0: 13, 1: 41})
    assert state.supply == () and not of_type(events, TileDrawn)
    assert state.pending[0].kind is DecisionKind.CARD


# -- action cards ----------------------------------------------------------------------------------------


def test_no_tile_joins_a_stopped_row_and_at_most_two_signs_lie_on_the_board() -> None:
    game = boardkit.game(PLAIN, pro=True, players=2)
    state = game.position(ROWS, [(41, 42), (43, 44)], action_cards=[[STOP, STOP, STOP], []], stops=[3])
    state, _ = step(game, state, {0: 41, 1: 43})
    # Rule 3 for the 41 and the 43: the highest unstopped last tile is the 30.
    assert game.view(state, 0).attaching == (41, 2, 1)
    state, _ = step(game, state, {0: (STOP, 2)})
    # Two signs lie on the board: seat 0 still holds two Stop! cards but is not asked again.
    assert state.stops == (2, 3) and state.hands[0] == (STOP, STOP)
    assert kinds(state.pending) == [(0, DecisionKind.CARD), (1, DecisionKind.CARD)]
    assert state.rows[1] == (20, 41, 43)


def test_tile_swap_and_one_more_tile_need_a_tile_behind_the_screen() -> None:
    game = boardkit.game(PLAIN, pro=True, players=2)
    state = game.position(ROWS, [(41,), (43,)], action_cards=[[SWAP, ONE_MORE], []])
    state, _ = step(game, state, {0: 41, 1: 43})
    assert state.phase == OVER


def test_one_more_tile_attaches_all_the_seats_played_tiles_now_lowest_first() -> None:
    game = boardkit.game(PLAIN, pro=True, players=2)
    state = game.position(ROWS, [(25, 5, 70), (21, 80, 90)], action_cards=[[ONE_MORE, SKIP], []])
    state, _ = step(game, state, {0: 25, 1: 21})
    # Seat 1's 21 goes first; then seat 0, before its 25, plays the 5 too: the 5 goes first.
    state, events = step(game, state, {0: (ONE_MORE, 5)})
    assert state.revealed == ((21, 1), (5, 0), (25, 0)) and state.attached == 1
    # Rule 3 for the 5: behind the highest last tile, the 40.
    assert game.view(state, 0).attaching == (5, 3, 1)
    assert state.pending[0].options == ((), (SKIP,))
    state, events = step(game, state, {0: ()})
    assert placements(events) == [(5, 3, 1)]
    # The Skip is still in hand for the 25.
    state, events = step(game, state, {0: ()})
    assert placements(events) == [(25, 1, 2)]
    assert state.screens == ((70,), (80, 90))


def test_one_more_tile_moves_the_seats_later_tiles_ahead_of_the_others() -> None:
    rows = [". D D . . . . T", *PLAIN[1:]]
    game = boardkit.game(rows, pro=True, players=2)
    state = game.position(ROWS, [(11, 50, 60), (12, 13, 99)], action_cards=[[ONE_MORE], []])
    state, _ = step(game, state, {0: (11, 50), 1: (12, 13)})
    state, events = step(game, state, {0: (ONE_MORE, 60)})
    # Seat 0's 11, 50 and 60 go before seat 1's 12 and 13.
    assert placements(events) == [(11, 0, 1), (50, 3, 1), (60, 3, 2), (12, 0, 2), (13, 0, 3)]


def test_skip_never_skips_a_rows_last_space_and_may_land_on_it() -> None:
    game = boardkit.game([". . . T", *PLAIN[1:]], pro=True, players=2)
    rows = [(10, 11), (20,), (30,), (40,), (), ()]
    state = game.position(rows, [(12, 50), (60, 70)], action_cards=[[SKIP], []])
    state, _ = step(game, state, {0: 12, 1: 60})
    # The next free space is space 2: a skip lands on the last space and takes the row.
    state, events = step(game, state, {0: (SKIP,)})
    assert of_type(events, RowTaken)[0].tiles == (10, 11)
    state = game.position([(10, 11, 13), (20,), (30,), (40,), (), ()], [(14, 50), (60, 70)],
                          action_cards=[[SKIP], []])  # fmt: skip
    state, _ = step(game, state, {0: 14, 1: 60})
    assert state.pending[0].kind is DecisionKind.ROW


def test_moving_to_the_front_fills_a_skipped_space_and_may_take_the_row() -> None:
    game = boardkit.game(["G . RR . . T", ". . . T", *PLAIN[2:]], pro=True, players=2, oxen={12: 4})
    state = game.position([(10, 12, 0, 14), (20, 21), (30,), (40,), (), ()], [(5, 50), (60, 70)],
                          action_cards=[[FRONT, FRONT], []])  # fmt: skip
    state, _ = step(game, state, {0: 5, 1: 60})
    assert state.pending[0].options == ((), (FRONT, 0), (FRONT, 1), (FRONT, 2), (FRONT, 3))
    state, events = step(game, state, {0: (FRONT, 0)})
    # The 12 lands on the skipped double red ox space: 8 minus points; the 5 triggers nothing.
    assert of_type(events, RowShifted) == [RowShifted(0, 5, 0, 2, "red_ox")]
    assert state.rows[0] == (5, 10, 12, 14) and state.scores[0] == -8
    # A full row: the 22 lands on the take-row space and opens the new row; the rest is taken.
    state = game.position([(10,), (20, 21, 22), (30,), (40,), (), ()], [(5, 50), (60, 70)],
                          action_cards=[[FRONT], []])  # fmt: skip
    state, _ = step(game, state, {0: 5, 1: 60})
    state, events = step(game, state, {0: (FRONT, 1)})
    assert of_type(events, RowShifted) == [RowShifted(0, 5, 1, 3, "take_row")]
    assert of_type(events, RowTaken) == [RowTaken(0, 1, (5, 20, 21), 3, -1)]
    assert game.view(state, 0).opening == (22, 1)


def test_front_and_ascending_list_only_rows_that_fit_and_no_luck_card_follows_the_front() -> None:
    game = boardkit.game(PLAIN, pro=True, players=2, luck=True)
    hands = [[FRONT, ASCENDING], []]
    state = game.position(ROWS, [(25, 50), (60, 70)], action_cards=hands, luck=[(1, 1), (0, 0)])
    state, _ = step(game, state, {0: 25, 1: 60})
    assert state.pending[0].options == ((), (FRONT, 2), (FRONT, 3), (ASCENDING, 0), (ASCENDING, 1))
    state, _ = step(game, state, {0: (FRONT, 2)})
    # Only one row-choosing card per tile, and no luck card on a moved row: the tile goes now.
    assert state.rows[2] == (25, 30)


def test_cards_are_offered_in_a_fixed_order_per_tile() -> None:
    game = boardkit.game(PLAIN, pro=True, players=2)
    hand = [STOP, SWAP, SKIP, SKIP, ASCENDING]
    state = game.position(ROWS, [(25, 50), (60, 70)], action_cards=[hand, []])
    state, _ = step(game, state, {0: 25, 1: 60})
    assert {o[0] for o in state.pending[0].options if o} == {STOP, SWAP, SKIP, ASCENDING}
    state, _ = step(game, state, {0: (ASCENDING, 0)})
    assert state.pending[0].options == ((), (SKIP,))
    state, _ = step(game, state, {0: (SKIP,)})
    state, events = step(game, state, {0: (SKIP,)})
    assert placements(events)[0] == (25, 0, 3) and state.rows[0] == (10, 0, 0, 25)


def test_an_illegal_action_card_is_refused() -> None:
    game = boardkit.game(PLAIN, pro=True, players=2)
    state = game.position(ROWS, [(25, 50), (60, 70)], action_cards=[[STOP], []])
    state, _ = step(game, state, {0: 25, 1: 60})
    for bad in ((STOP, 4), (SKIP,), [STOP, 1], 1):
        with pytest.raises(IllegalActionError):
            game.apply(state, {0: bad})  # type: ignore[dict-item]


# -- the end ----------------------------------------------------------------------------------------------


def test_the_game_ends_after_the_round_a_screen_empties_and_scores_tiles_and_action_cards_left() -> None:
    game = boardkit.game(PLAIN, pro=True, players=3, oxen={50: 3, 55: 2})
    state = game.position(ROWS, [(41,), (42, 50, 55), (43, 60)], action_cards=[[], [SKIP, SKIP], [STOP]],
                          scores=[0, 2, -43])  # fmt: skip
    state, events = step(game, state, {0: 41, 1: 42, 2: 43})
    while state.phase != OVER:
        state, events = step(game, state, {d.seat: () for d in state.pending})
    final = [(p.seat, p.points, p.reason) for p in of_type(events, PointsScored)]
    assert final == [
        (1, -5, "tiles_left"), (1, 2, "action_cards"), (2, -1, "tiles_left"), (2, 1, "action_cards")
    ]  # fmt: skip
    outcome = game.outcome(state)
    assert outcome is not None and outcome.termination is Termination.TILES_EXHAUSTED
    assert outcome.scores == (0, -1, -43)


def test_the_round_limit_ends_a_game_that_runs_too_long() -> None:
    game = boardkit.game(PLAIN, pro=True, players=2, round_limit=1)
    state = game.position(ROWS, [(41, 50), (42, 60)])
    state, _ = step(game, state, {0: 41, 1: 42})
    outcome = game.outcome(state)
    assert outcome is not None and outcome.termination is Termination.HANDS_PLAYED
    assert outcome.scores == (-1, -1)


# -- views, defaults, config --------------------------------------------------------------------------


def test_a_view_hides_the_other_hands_and_screens_and_shows_counts() -> None:
    game = boardkit.game(PLAIN, pro=True, players=3)
    state = game.position(ROWS, [(51, 52), (61, 62), (71, 72)], action_cards=[[SKIP], [STOP, SWAP], []],
                          discard=[FRONT])  # fmt: skip
    view = game.view(state, 1)
    assert view.pro and view.action_cards == (STOP, SWAP) and view.hand_sizes == (1, 2, 0)
    assert view.discard == (FRONT,) and view.action_pile_size == 36 - 4 and view.stop_signs == 2
    assert game.view(state, 0).action_cards == (SKIP,)
    shown = view.to_json()
    assert shown["action_cards"] == [STOP, SWAP] and "hands" not in shown


def test_the_default_action_card_answer_is_a_pass() -> None:
    game = boardkit.game(PLAIN, pro=True, players=2)
    state = game.position(ROWS, [(25, 50), (60, 70)], action_cards=[[STOP], []])
    state, _ = step(game, state, {0: 25, 1: 60})
    assert game.default_action(state, state.pending[0]) == ()


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"players": 6, "stop_cards": 0, "tile_swap_cards": 1, "skip_cards": 0, "move_to_front_cards": 0,
          "attach_ascending_cards": 0, "one_more_tile_cards": 0}, "need 12, the deck has 1"),
        ({"stop_signs": 4}, "could close all 4 active rows"),
    ],
)  # fmt: skip
def test_bad_pro_configs_say_what_is_wrong(config: dict[str, int], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        Brettspiel(BrettspielConfig(pro=True, **config))


def test_a_pro_position_must_be_sound() -> None:
    game = boardkit.game(PLAIN, pro=True, players=2)
    with pytest.raises(ConfigError, match="action cards"):
        game.position(ROWS, [(41,), (42,)], action_cards=[[STOP] * 7, []])
    with pytest.raises(ConfigError, match="stop signs"):
        game.position(ROWS, [(41,), (42,)], stops=[4])
    with pytest.raises(ConfigError, match="stop signs"):
        game.position(ROWS, [(41,), (42,)], stops=[0, 1, 2])
    # Screens may differ in size in the pro version.
    assert game.position(ROWS, [(41,), (42, 43)]).screens == ((41,), (42, 43))
