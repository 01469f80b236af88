"""Every example of the Brettspiel rulebook (002), reproduced on a board built for the test.

The rulebook's figures are not in the text, so each test sets up rows and oxen that fit
what the example says; rows and spaces count from 0 (the rulebook's "first row" is row 0).
Seats: Basti 0, Mella 1, Steffen 2.
"""

from __future__ import annotations

import boardkit
from boardkit import of_type, placements, step

from games.board.rules.brettspiel import (
    LuckCard,
    LuckCardPlayed,
    PointsScored,
    RowTaken,
    TileAttached,
)
from referee.rules.core import Decision, DecisionKind

BASTI, MELLA, STEFFEN = 0, 1, 2
PLAIN = [". . . . . . . T"] * 5


def test_basti_57_goes_to_the_smallest_difference_then_mella_60_and_steffen_93() -> None:
    game = boardkit.game(PLAIN)
    # 57 fits the first, third and fourth rows ascending; the fourth ends in 56.
    state = game.position([(30, 41), (70, 75), (45, 50), (51, 56), ()], [(57,), (60,), (93,)])
    state, events = step(game, state, {BASTI: 57, MELLA: 60, STEFFEN: 93})
    assert placements(events) == [(57, 3, 2), (60, 3, 3), (93, 1, 2)]
    assert state.rows[:4] == ((30, 41), (70, 75, 93), (45, 50), (51, 56, 57, 60))
    assert not of_type(events, PointsScored)


def test_basti_1_is_too_low_and_goes_after_the_highest_last_tile_then_steffen_18_and_mella_19() -> None:
    game = boardkit.game(PLAIN)
    state = game.position([(12, 14), (80, 85), (6,), (30, 33), ()], [(1,), (19,), (18,)])
    state, events = step(game, state, {BASTI: 1, MELLA: 19, STEFFEN: 18})
    # Rule 3 attaches the 1 at the end of the second row (85 is the highest last tile).
    assert placements(events) == [(1, 1, 2), (18, 0, 2), (19, 0, 3)]
    assert state.rows[1] == (80, 85, 1)


def test_steffen_41_on_a_take_row_space_scores_8_minus_and_opens_the_next_free_row() -> None:
    game = boardkit.game(
        [". . . T", ". . . . . T", ". . . . . T", ". . . . . T", ". . . . . T"],
        oxen={15: 2, 18: 3, 19: 3},
    )
    state = game.position([(15, 18, 19), (50,), (60,), (10,), ()], [(70,), (80,), (41,)])
    state, events = step(game, state, {BASTI: 70, MELLA: 80, STEFFEN: 41})
    assert placements(events)[0] == (41, 0, 3)
    assert of_type(events, RowTaken) == [RowTaken(STEFFEN, 0, (15, 18, 19), 8, 4)]
    assert state.scores[STEFFEN] == -8
    assert state.boxed == (15, 18, 19)
    assert state.rows[0] == () and state.rows[4] == (41,)
    assert sum(1 for row in state.rows if row) == 4


def test_mella_23_with_5_plus_points_on_two_red_oxen_scores_5_plus_instead_of_10_minus() -> None:
    rows = [". . RR . T", ". . . . . T", ". . . . . T", ". . . . . T", ". . . . . T"]
    game = boardkit.game(rows, luck=True, oxen={23: 5})
    start = game.position(
        [(20, 21), (50,), (60,), (10,), ()], [(70,), (23,), (80,)], luck=[(0, 0), (1, 0), (0, 0)]
    )
    state, events = step(game, start, {BASTI: 70, MELLA: 23, STEFFEN: 80})
    assert state.pending == (Decision(MELLA, DecisionKind.LUCK, ((), (LuckCard.PLUS_POINTS,))),)
    view = game.view(state, MELLA)
    assert view.attaching == (23, 0, 2)
    state, events = step(game, state, {MELLA: (LuckCard.PLUS_POINTS,)})
    assert of_type(events, LuckCardPlayed) == [LuckCardPlayed(MELLA, 1, 23, ())]
    assert of_type(events, TileAttached)[0] == TileAttached(MELLA, 23, 0, 2, "plus_points")
    assert state.scores[MELLA] == 5
    assert state.luck[MELLA] == (0, 0) and state.piles[0] == 8
    # Without the card the two red oxen cost her twice the 23's five oxen.
    state, _ = step(game, start, {BASTI: 70, MELLA: 23, STEFFEN: 80})
    state, _ = step(game, state, {MELLA: ()})
    assert state.scores[MELLA] == -10


def test_basti_25_with_positive_oxen_turns_17_minus_into_3_plus() -> None:
    rows = [". . . T", ". . . . . T", ". . . . . T", ". . . . . T", ". . . . . T"]
    # The 23 came after the 83 by rule 3; the row shows 17 oxen, the 83 and the 23 ten of them.
    game = boardkit.game(rows, luck=True, oxen={80: 7, 83: 5, 23: 5})
    start = game.position(
        [(80, 83, 23), (90,), (95,), (10,), ()], [(25,), (96,), (97,)], luck=[(0, 1), (0, 0), (0, 0)]
    )
    state, _ = step(game, start, {BASTI: 25, MELLA: 96, STEFFEN: 97})
    (decision,) = state.pending
    assert decision.seat == BASTI and decision.kind is DecisionKind.LUCK
    assert decision.options == ((), (2, 23, 80), (2, 23, 83), (2, 80, 83))
    state, events = step(game, state, {BASTI: (LuckCard.POSITIVE_OXEN, 23, 83)})
    assert of_type(events, PointsScored)[0] == PointsScored(BASTI, 3, 3, 3, "positive_oxen")
    assert state.scores[BASTI] == 3
    assert state.rows[0] == () and state.rows[4] == (25,)
    # Without the card the row costs all 17.
    state, _ = step(game, start, {BASTI: 25, MELLA: 96, STEFFEN: 97})
    state, _ = step(game, state, {BASTI: ()})
    assert state.scores[BASTI] == -17
