"""Every example of the Brettspiel rulebook's pro version (002), on boards built for the test.

As in ``test_board_examples``, the figures are not in the text: each test sets up rows, oxen
and hands that fit what the example says. Rows and spaces count from 0. Seats: Basti 0,
Mella 1, Steffen 2. Only the seat of the example holds action cards, so the engine asks no one
else before attaching.
"""

from __future__ import annotations

import boardkit
from boardkit import of_type, placements, step

from games.board.rules.brettspiel import (
    ActionCard,
    ActionCardPlayed,
    LuckCard,
    PointsScored,
    RowOpened,
    RowShifted,
    RowTaken,
    TileAttached,
)
from referee.rules.core import Decision, DecisionKind

BASTI, MELLA, STEFFEN = 0, 1, 2
STOP, SWAP, SKIP, FRONT, ASCENDING, ONE_MORE = (int(card) for card in ActionCard)
PLAIN = [". . . . . . . T"] * 6


def hands(**held: list[int]) -> list[list[int]]:
    """Action card hands by name: ``hands(steffen=[STOP])``."""
    names = ("basti", "mella", "steffen")
    return [held.get(name, []) for name in names]


def test_steffen_plays_stop_before_the_67_and_attaches_it_to_the_first_row_instead_of_the_second() -> None:
    game = boardkit.game(PLAIN, pro=True)
    start = game.position(
        [(40, 50), (55, 60), (80,), (90,), (), ()], [(91,), (92,), (67,)], action_cards=hands(steffen=[STOP])
    )
    state, events = step(game, start, {BASTI: 91, MELLA: 92, STEFFEN: 67})
    # The 67 is first to be attached: Steffen may play his card on any active row.
    assert state.pending == (
        Decision(STEFFEN, DecisionKind.ACTION_CARD, ((), (STOP, 0), (STOP, 1), (STOP, 2), (STOP, 3))),
    )
    assert game.view(state, STEFFEN).attaching == (67, 1, 2)
    state, events = step(game, state, {STEFFEN: (STOP, 1)})
    assert of_type(events, ActionCardPlayed) == [ActionCardPlayed(STEFFEN, STOP, 67, (1,))]
    assert placements(events)[0] == (67, 0, 2)
    assert state.stops == (1,) and state.discard == (STOP,) and state.hands[STEFFEN] == ()
    # Without the card rule 2 puts the 67 behind the 60.
    state, events = step(game, start, {BASTI: 91, MELLA: 92, STEFFEN: 67})
    state, events = step(game, state, {STEFFEN: ()})
    assert placements(events)[0] == (67, 1, 2)


def test_mella_swaps_her_4_for_the_22_and_attaches_it_at_once_before_bastis_20() -> None:
    game = boardkit.game(PLAIN, pro=True)
    state = game.position(
        [(10,), (15,), (30,), (50,), (), ()],
        [(20, 70), (4, 22), (60, 80)],
        action_cards=hands(mella=[SWAP]),
    )
    state, events = step(game, state, {BASTI: 20, MELLA: 4, STEFFEN: 60})
    (decision,) = state.pending
    assert decision.seat == MELLA and decision.kind is DecisionKind.ACTION_CARD
    assert decision.options == ((), (SWAP, 22))
    state, events = step(game, state, {MELLA: (SWAP, 22)})
    assert of_type(events, ActionCardPlayed) == [ActionCardPlayed(MELLA, SWAP, 4, (22,))]
    # The 22 goes first, behind the 15, though Basti's 20 is lower; the 20 then fits behind the 10.
    assert placements(events) == [(22, 1, 1), (20, 0, 1), (60, 3, 1)]
    assert state.screens[MELLA] == (4,)


def test_basti_skips_the_7_minus_points_space_with_his_57() -> None:
    rows = [". . . . . . T", ". . . . . . T", ". . . . . . T", ". . -7 . . . T", ". . . . T", ". . . . T"]
    game = boardkit.game(rows, pro=True)
    start = game.position(
        [(30,), (70,), (80,), (50, 56), (), ()],
        [(57, 58), (90, 91), (95, 96)],
        action_cards=hands(basti=[SKIP]),
    )
    state, _ = step(game, start, {BASTI: 57, MELLA: 90, STEFFEN: 95})
    assert state.pending == (Decision(BASTI, DecisionKind.ACTION_CARD, ((), (SKIP,))),)
    assert game.view(state, BASTI).attaching == (57, 3, 2)
    state, events = step(game, state, {BASTI: (SKIP,)})
    assert game.view(state, BASTI).phase == "play"
    assert of_type(events, TileAttached)[0] == TileAttached(BASTI, 57, 3, 3, "plain")
    assert not [p for p in of_type(events, PointsScored) if p.seat == BASTI]
    # The skipped space stays empty: the next tile goes after the 57.
    assert state.rows[3] == (50, 56, 0, 57)
    state, events = step(game, state, {BASTI: 58, MELLA: 91, STEFFEN: 96})
    assert placements(events)[0] == (58, 3, 4)
    assert state.rows[3] == (50, 56, 0, 57, 58)
    # Without the card the 57 lands on the 7 minus points.
    state, _ = step(game, start, {BASTI: 57, MELLA: 90, STEFFEN: 95})
    state, events = step(game, state, {BASTI: ()})
    assert of_type(events, PointsScored)[0] == PointsScored(BASTI, -7, -7, -7, "points")


def test_steffen_moves_the_10_to_the_front_and_the_shifted_22_scores_two_green_oxen_for_6_points() -> None:
    # The first space shows two red oxen: the 10 placed there triggers nothing.
    rows = ["RR . . . . GG . T", *PLAIN[1:]]
    game = boardkit.game(rows, pro=True, oxen={22: 3, 10: 3})
    state = game.position(
        [(12, 15, 18, 19, 22), (30,), (40,), (50,), (), ()],
        [(60,), (70,), (10,)],
        action_cards=hands(steffen=[FRONT]),
    )
    state, _ = step(game, state, {BASTI: 60, MELLA: 70, STEFFEN: 10})
    (decision,) = state.pending
    # The 10 is lower than the first tile of every row.
    assert decision.options == ((), (FRONT, 0), (FRONT, 1), (FRONT, 2), (FRONT, 3))
    state, events = step(game, state, {STEFFEN: (FRONT, 0)})
    assert of_type(events, RowShifted) == [RowShifted(STEFFEN, 10, 0, 5, "green_ox")]
    assert state.rows[0] == (10, 12, 15, 18, 19, 22)
    assert of_type(events, PointsScored) == [PointsScored(STEFFEN, 6, 6, 6, "green_ox")]


def test_mella_attaches_the_69_ascending_to_the_fourth_row_of_the_first_second_and_fourth() -> None:
    game = boardkit.game(PLAIN, pro=True)
    state = game.position(
        [(20, 41), (55, 60), (70, 75), (30, 35), (), ()],
        [(90,), (69,), (95,)],
        action_cards=hands(mella=[ASCENDING]),
    )
    state, _ = step(game, state, {BASTI: 90, MELLA: 69, STEFFEN: 95})
    (decision,) = state.pending
    assert decision.options == ((), (ASCENDING, 0), (ASCENDING, 1), (ASCENDING, 3))
    # Rule 2 would put it behind the 60.
    assert game.view(state, MELLA).attaching == (69, 1, 2)
    state, events = step(game, state, {MELLA: (ASCENDING, 3)})
    assert placements(events)[0] == (69, 3, 2)
    assert state.rows[3] == (30, 35, 69)


def test_positive_oxen_on_take_row_tiles_scores_two_tiles_then_puts_every_tile_behind_the_screen() -> None:
    rows = [". . . TT", *PLAIN[1:]]
    game = boardkit.game(rows, pro=True, luck=True, oxen={80: 7, 83: 5, 23: 5})
    state = game.position(
        [(80, 83, 23), (90,), (95,), (10,), (), ()],
        [(25, 1), (96, 2), (97, 3)],
        luck=[(0, 1), (0, 0), (0, 0)],
    )
    state, _ = step(game, state, {BASTI: 25, MELLA: 96, STEFFEN: 97})
    (decision,) = state.pending
    assert decision.kind is DecisionKind.LUCK and decision.options[-1] == (LuckCard.POSITIVE_OXEN, 80, 83)
    state, events = step(game, state, {BASTI: (LuckCard.POSITIVE_OXEN, 23, 83)})
    assert of_type(events, RowTaken) == [RowTaken(BASTI, 0, (80, 83, 23), 17, -1)]
    assert of_type(events, PointsScored) == [PointsScored(BASTI, 10, 10, 10, "positive_oxen")]
    assert state.screens[BASTI] == (1, 23, 80, 83)
    # Then Basti opens any other free row with his 25.
    assert state.pending == (Decision(BASTI, DecisionKind.ROW, (4, 5)),)
    state, events = step(game, state, {BASTI: 5})
    assert of_type(events, RowOpened) == [RowOpened(BASTI, 25, 5, "plain")]
    assert state.rows[0] == () and state.rows[5] == (25,)
