"""The Anniversary rules on positions set up by hand: the edition's worked example and every special card."""

from __future__ import annotations

import pytest
from annkit import of_type, step

from games.anniversary.rules.anniversary import (
    DRAW,
    PLAY,
    ROW,
    SPECIAL,
    TAKE,
    Anniversary,
    AnniversaryConfig,
    BlocksRemoved,
    CardPlaced,
    CardShifted,
    CardsSetAside,
    RowChosen,
    Special,
    SpecialDrawn,
    SpecialPlayed,
    SpecialSwapped,
)
from referee.rules.core import CHANCE, DecisionKind
from referee.rules.errors import IllegalActionError

FULL = (10, 11, 12, 13, 14)
"""A full row of five cards (10: 3 heads, 11: 5, the rest 1 each: 11 heads)."""


def game(players: int = 2, **config: object) -> Anniversary:
    return Anniversary(AnniversaryConfig(players=players, **config))  # type: ignore[arg-type]


def placed(events: list) -> list[tuple[int, int, int, int, tuple[int, ...]]]:
    """``(seat, card, row, position, taken)`` of every placed card."""
    return [(e.seat, e.card, e.row, e.position, e.taken) for e in of_type(events, CardPlaced)]


# -- the edition's worked example --------------------------------------------------------------


def test_the_worked_example_negative_equals_positive_on_the_row_of_11_and_13() -> None:
    """Holger's 3 is a low card; he takes the row of 11 and 13 with "Negative = Positive" on the 11:
    the 11 counts five plus points, the 13's one head is paid from them, and cards worth up to four
    bull heads go from his bull pile, set aside with the 11 and the 13. The 3 starts the row."""
    variant = game()
    state = variant.position(
        rows=[(11, 13), (20,), (30,), (40,)],
        hands=[(3, 50), (60, 70)],
        specials=[(Special.NEGATIVE_POSITIVE,), ()],
        # 1 + 3 + 2 + 7 heads: the 4 and the 10 are worth four together (the 10 and the 15 five).
        piles=[(4, 10, 15, 55), ()],
    )
    assert state.scores == (13, 0)
    state, events = step(variant, state, {0: 3, 1: 60})
    assert state.phase == ROW, "a low card: its owner chooses the row (nothing to play before)"
    state, events = step(variant, state, {0: 0})
    assert of_type(events, RowChosen) == [RowChosen(0, 3, 0)]
    assert placed(events) == [(0, 3, 0, 0, (11, 13))]
    assert state.phase == TAKE and state.scores == (19, 0)
    (decision,) = variant.pending(state)
    assert decision.kind is DecisionKind.ACTION_CARD
    assert {(6, 11), (6, 13), ()} <= set(decision.options)
    state, events = step(variant, state, {0: (Special.NEGATIVE_POSITIVE, 11)})
    assert of_type(events, CardsSetAside) == [CardsSetAside(0, 11, (4, 10, 11, 13), 10)]
    assert state.piles[0] == (15, 55)
    assert state.scores == (9, 0), "13 minus four: the 4 and the 10 are gone, the 15 and the 55 stay"
    assert state.rows[0] == (3,)
    assert state.set_aside == (4, 10, 11, 13)
    assert Special.NEGATIVE_POSITIVE in state.discard
    assert state.phase == PLAY and state.rows[3] == (40, 60)


def test_negative_equals_positive_on_a_one_head_card_covers_only_part_of_the_row() -> None:
    """Plus points below the other taken cards' heads cancel taken cards only (the row-first reading)."""
    variant = game(swap=False)
    state = variant.position(
        rows=[FULL, (50,)],
        hands=[(15, 1), (60, 2)],
        specials=[(Special.NEGATIVE_POSITIVE,), ()],
        piles=[(20,), ()],
    )
    state, _ = step(variant, state, {0: 15, 1: 60})
    assert state.phase == TAKE and state.taken == FULL
    state, events = step(variant, state, {0: (Special.NEGATIVE_POSITIVE, 12)})
    # 12 is worth one plus point: it and one more one-head card (the highest: 14) are set aside.
    assert of_type(events, CardsSetAside) == [CardsSetAside(0, 12, (12, 14), 2)]
    assert state.scores == (3 + 11 - 2, 0)


@pytest.mark.parametrize("row_first", [True, False])
def test_negative_equals_positive_spends_what_the_row_leaves_on_earlier_cards(row_first: bool) -> None:
    """The 76 counts one plus point; the other taken card, the 75, is worth two, so the plus point
    cannot pay for it: it goes to the 83 taken earlier this round (rule 5, "what is left"). Both
    readings agree here (issue 31: the row-first reading used to set aside the 76 alone)."""
    variant = game(positive_row_first=row_first)
    state = variant.position(
        [(75, 76), (50,), (60,), (70,)], [(3, 40), (90, 91)], [(6,), ()], piles=[(83,), ()]
    )
    state, _ = step(variant, state, {0: 3, 1: 90})
    state, _ = step(variant, state, {0: 0})
    assert state.phase == TAKE and state.taken == (75, 76)
    state, events = step(variant, state, {0: (Special.NEGATIVE_POSITIVE, 76)})
    assert of_type(events, CardsSetAside) == [CardsSetAside(0, 76, (76, 83), 2)]
    assert state.piles[0] == (75,) and state.scores == (2, 0)
    assert state.set_aside == (76, 83)


def test_negative_equals_positive_over_all_cards_when_not_row_first() -> None:
    variant = game(swap=False, positive_row_first=False)
    state = variant.position(
        rows=[(22, 23), (50,)],
        hands=[(1, 3), (60, 2)],
        specials=[(Special.NEGATIVE_POSITIVE,), ()],
        piles=[(33,), ()],
    )
    state, _ = step(variant, state, {0: 1, 1: 60})
    state, _ = step(variant, state, {0: 0})
    state, events = step(variant, state, {0: (Special.NEGATIVE_POSITIVE, 22)})
    # Five plus points: the 33 (five heads) rather than the 23 (one head), as the row-first rule would.
    assert of_type(events, CardsSetAside) == [CardsSetAside(0, 22, (22, 33), 10)]
    assert state.piles[0] == (23,)


# -- one example per special card -----------------------------------------------------------------


def test_fifth_row_starts_a_new_row_and_is_not_playable_while_five_rows_lie() -> None:
    variant = game()
    state = variant.position(
        rows=[(10,), (20,), (30,), (40,)],
        hands=[(5, 6), (60, 7)],
        specials=[(Special.FIFTH_ROW, Special.FIFTH_ROW), ()],
    )
    state, _ = step(variant, state, {0: 5, 1: 60})
    assert state.phase == SPECIAL
    (decision,) = variant.pending(state)
    assert (Special.FIFTH_ROW,) in decision.options
    state, events = step(variant, state, {0: (Special.FIFTH_ROW,)})
    assert of_type(events, SpecialPlayed) == [SpecialPlayed(0, Special.FIFTH_ROW, ())]
    assert placed(events)[0] == (0, 5, 4, 0, ())
    assert state.rows == ((10,), (20,), (30,), (40, 60), (5,)) and state.scores == (0, 0)
    state, _ = step(variant, state, {0: 6, 1: 7})
    assert state.phase != SPECIAL, "five rows: a second '5th Row' has no use"
    assert state.specials[0] == (Special.FIFTH_ROW,)


def test_the_fifth_row_stays_until_the_round_ends_by_default() -> None:
    variant = game()
    state = variant.position(
        rows=[(10,), (20,), (30,), (40,), (5,)], hands=[(1, 2), (60, 61)], specials=[(), ()]
    )
    state, _ = step(variant, state, {0: 1, 1: 60})
    state, events = step(variant, state, {0: 4})
    assert placed(events)[0] == (0, 1, 4, 0, (5,)) and len(state.rows) == 5


def test_with_next_take_the_next_take_closes_the_row_with_the_card() -> None:
    """The fan precursor's reading: the taker takes the row and their own card; four rows are left."""
    variant = game(fifth_row_end="next_take")
    state = variant.position(
        rows=[(10,), (20,), (30,), (40,), (5,)], hands=[(1, 2), (60, 61)], specials=[(), ()]
    )
    state, _ = step(variant, state, {0: 1, 1: 60})
    state, events = step(variant, state, {0: 1})
    (event,) = of_type(events, CardPlaced)[:1]
    assert (event.taken, event.closed) == ((20, 1), True)
    assert state.rows == ((10,), (30,), (40, 60), (5,))
    assert state.piles[0] == (20, 1) and state.scores == (4, 0)


def test_seven_nimmt_puts_the_card_sixth_and_the_seventh_card_takes_six() -> None:
    variant = game()
    state = variant.position(
        rows=[FULL, (50,)], hands=[(15, 1), (16, 2)], specials=[(Special.SEVEN_NIMMT,), ()]
    )
    state, _ = step(variant, state, {0: 15, 1: 16})
    assert state.phase == SPECIAL
    state, events = step(variant, state, {0: (Special.SEVEN_NIMMT,)})
    first, second = placed(events)
    assert first == (0, 15, 0, 5, ())
    assert second == (1, 16, 0, 0, (*FULL, 15)), "the next card there takes six number cards"
    assert state.rows[0] == (16,) and state.sevens == (False, False)
    assert state.scores == (0, 11 + 2), "the five cards and the 15 (two heads)"
    assert state.discard == (Special.SEVEN_NIMMT,), "the card stays on the row until it is taken"


def test_seven_nimmt_has_no_use_unless_the_card_would_take_a_full_row() -> None:
    variant = game()
    state = variant.position(
        rows=[(10, 11), (50,)], hands=[(15, 1), (16, 2)], specials=[(Special.SEVEN_NIMMT,), ()]
    )
    state, _ = step(variant, state, {0: 15, 1: 16})
    assert state.phase == PLAY and state.rows[0] == (10, 11, 15, 16)


def test_insert_puts_the_card_where_the_row_stays_ascending() -> None:
    variant = game()
    state = variant.position(
        rows=[(10, 20, 30, 40, 45), (50, 60)], hands=[(55, 1), (99, 2)], specials=[(Special.INSERT,), ()]
    )
    state, _ = step(variant, state, {0: 55, 1: 99})
    (decision,) = variant.pending(state)
    assert (Special.INSERT, 1) in decision.options
    assert (Special.INSERT, 0) not in decision.options, "a full row takes no inserted card"
    state, events = step(variant, state, {0: (Special.INSERT, 1)})
    assert placed(events)[0] == (0, 55, 1, 1, ())
    assert state.rows[1] == (50, 55, 60, 99)


def test_insert_saves_a_low_card_at_the_front_of_a_row() -> None:
    variant = game()
    state = variant.position(
        rows=[(10, 20), (50,)], hands=[(5, 1), (99, 2)], specials=[(Special.INSERT,), ()]
    )
    state, _ = step(variant, state, {0: 5, 1: 99})
    state, events = step(variant, state, {0: (Special.INSERT, 0)})
    assert placed(events)[0] == (0, 5, 0, 0, ()) and state.rows[0] == (5, 10, 20)


def test_replace_swaps_the_played_card_for_another_from_the_hand_at_the_same_moment() -> None:
    variant = game()
    state = variant.position(
        rows=[FULL, (40,)], hands=[(15, 45, 3), (16, 2, 4)], specials=[(Special.REPLACE,), ()]
    )
    state, _ = step(variant, state, {0: 15, 1: 16})
    (decision,) = variant.pending(state)
    assert {(Special.REPLACE, 3), (Special.REPLACE, 45)} <= set(decision.options)
    state, events = step(variant, state, {0: (Special.REPLACE, 45)})
    assert state.hands[0] == (3, 15), "the revealed card goes back to the hand"
    first, second = placed(events)
    assert first == (0, 45, 1, 1, ()), "45 is placed in 15's place in the order, before the 16"
    assert second[:2] == (1, 16) and second[4] == FULL, "so the 16 takes the full row"
    assert state.scores == (0, 11)


def test_shift_moves_a_table_card_so_the_played_card_takes_nothing() -> None:
    variant = game()
    state = variant.position(rows=[FULL, (50,)], hands=[(15, 1), (60, 2)], specials=[(Special.SHIFT,), ()])
    state, _ = step(variant, state, {0: 15, 1: 60})
    (decision,) = variant.pending(state)
    assert (Special.SHIFT, 14, 1) in decision.options
    assert not any(o[:1] == (Special.SHIFT,) and o[2] == 0 for o in decision.options if o), (
        "not into its own row"
    )
    state, events = step(variant, state, {0: (Special.SHIFT, 14, 1)})
    assert of_type(events, CardShifted) == [CardShifted(14, 0, 1, 0)]
    assert state.rows == ((10, 11, 12, 13, 15), (14, 50, 60))
    assert state.scores == (0, 0)


def test_block_closes_a_row_until_another_row_is_taken() -> None:
    variant = game()
    state = variant.position(
        rows=[FULL, (5,), (90,)], hands=[(15, 1, 3), (16, 2, 4)], specials=[(Special.BLOCK,), ()]
    )
    state, _ = step(variant, state, {0: 15, 1: 16})
    state, events = step(variant, state, {0: (Special.BLOCK, 0)})
    assert placed(events) == [(0, 15, 1, 1, ()), (1, 16, 1, 2, ())], "rules 1 and 2 skip the blocked row"
    assert state.blocked == (True, False, False) and state.scores == (0, 0)
    # Next turn: a low card may not take the blocked row; its take removes the Block.
    state, _ = step(variant, state, {0: 1, 1: 2})
    (decision,) = variant.pending(state)
    assert decision.kind is DecisionKind.ROW and decision.options == (1, 2)
    with pytest.raises(IllegalActionError):
        variant.apply(state, {0: 0})
    state, events = step(variant, state, {0: 2})
    assert of_type(events, BlocksRemoved) == [BlocksRemoved((0,))]
    assert state.blocked == (False, False, False) and Special.BLOCK in state.discard


def test_block_with_block_end_turn_is_removed_at_the_end_of_the_turn() -> None:
    variant = game(block_end="turn")
    state = variant.position(
        rows=[FULL, (5,), (90,)], hands=[(15, 1), (16, 2)], specials=[(Special.BLOCK,), ()]
    )
    state, _ = step(variant, state, {0: 15, 1: 16})
    state, events = step(variant, state, {0: (Special.BLOCK, 0)})
    assert of_type(events, BlocksRemoved) == [BlocksRemoved((0,))]
    assert state.phase == PLAY and state.blocked == (False, False, False)


def test_a_take_offers_a_swap_and_the_draw_is_a_chance_step() -> None:
    variant = game()
    state = variant.position(rows=[FULL, (50,)], hands=[(15, 1), (60, 2)], specials=[(Special.BLOCK,), ()])
    state, _ = step(variant, state, {0: 15, 1: 60})
    state, _ = step(variant, state, {0: ()})  # no Block now
    assert state.phase == TAKE
    (decision,) = variant.pending(state)
    assert decision.options == ((), (0, Special.BLOCK))
    state, events = step(variant, state, {0: (0, Special.BLOCK)})
    assert of_type(events, SpecialSwapped) == [SpecialSwapped(0, Special.BLOCK)]
    assert state.phase == DRAW and variant.pending(state)[0].seat == CHANCE
    deck = sum(state.deck)
    with pytest.raises(IllegalActionError):
        variant.apply(state, {CHANCE: 99})
    state, events = step(variant, state, {CHANCE: int(Special.INSERT)})
    assert of_type(events, SpecialDrawn) == [SpecialDrawn(0)]
    assert state.specials[0] == (Special.INSERT,) and sum(state.deck) == deck - 1
    assert state.discard == (Special.BLOCK,)
    assert state.phase == PLAY, "one swap per take"


def test_one_special_card_per_turn_by_default_and_more_when_configured() -> None:
    kinds = (Special.BLOCK, Special.INSERT)
    for per_turn, asked_again in ((1, False), (2, True)):
        variant = game(specials_per_turn=per_turn)
        state = variant.position(rows=[FULL, (5,), (90,)], hands=[(15, 1), (16, 2)], specials=[kinds, ()])
        state, _ = step(variant, state, {0: 15, 1: 16})
        state, _ = step(variant, state, {0: (Special.BLOCK, 2)})
        assert (state.phase == SPECIAL) is asked_again


def test_an_illegal_special_card_is_refused() -> None:
    variant = game()
    state = variant.position(rows=[FULL, (50,)], hands=[(15, 1), (60, 2)], specials=[(Special.INSERT,), ()])
    state, _ = step(variant, state, {0: 15, 1: 60})
    for action in ((Special.INSERT, 0), (Special.BLOCK, 1), (Special.INSERT, 9), 3):
        with pytest.raises(IllegalActionError):
            variant.apply(state, {0: action})
