"""The end of a hand and of the game: target score, fixed number of hands, shared ranks."""

from __future__ import annotations

import notation
import pytest

from games.classic.rules.classic import Classic, ClassicConfig, GameEnded, HandDealt, HandScored
from referee.rules.chance import SeededChance
from referee.rules.core import CHANCE, Decision, DecisionKind, Outcome, Termination
from referee.rules.errors import GameOverError
from referee.rules.transcript import Playthrough

# Row 0 holds the 55 (7 bull heads); the 1 is a low card whose owner takes it.
RICH_ROWS = "55 | 66 | 77 | 88"


def _take_55(scores: str, target: int | None = 66, hands: int | None = None):
    """A 4-seat, 1-card position where seat 0 plays the 1 and takes the 55."""
    variant = Classic(ClassicConfig(target=target, hands=hands))
    state = variant.position(
        notation.rows(RICH_ROWS), notation.hands("1 | 90 | 91 | 92"), scores=notation.numbers(scores)
    )
    state, _ = variant.apply(state, {0: 1, 1: 90, 2: 91, 3: 92})
    state, events = variant.apply(state, {0: 0})
    return variant, state, events


def test_the_target_ends_the_game_after_the_hand_not_at_once() -> None:
    variant = Classic()
    state = variant.position(
        notation.rows(RICH_ROWS), notation.hands("1 2 | 90 93 | 91 94 | 92 95"), scores=(60, 0, 0, 0)
    )
    state, _ = variant.apply(state, {0: 1, 1: 90, 2: 91, 3: 92})
    state, _ = variant.apply(state, {0: 0})
    assert state.scores == (67, 0, 0, 0)
    assert variant.outcome(state) is None, "the hand is played out first"
    assert [d.kind for d in variant.pending(state)] == [DecisionKind.CARD] * 4
    state, events = variant.apply(state, {0: 2, 1: 93, 2: 94, 3: 95})
    # 93 fills row 3 (88 90 91 92 93), the 94 takes it: 5 + 3 + 1 + 1 + 1.
    assert state.scores == (67, 0, 11, 0)
    assert events[-2:] == (
        HandScored(1, (7, 0, 11, 0), (67, 0, 11, 0)),
        GameEnded((67, 0, 11, 0), (4, 1, 3, 1), "target_reached"),
    )
    assert variant.outcome(state) == Outcome((67, 0, 11, 0), (4, 1, 3, 1), Termination.TARGET_REACHED)
    assert variant.pending(state) == ()
    assert variant.view(state, 0).phase == "over"
    with pytest.raises(GameOverError):
        variant.apply(state, {0: 2})
    with pytest.raises(GameOverError):
        variant.apply(state, {})


@pytest.mark.parametrize(
    ("start", "over"),
    [("59 0 0 0", True), ("58 0 0 0", False), ("0 0 0 70", True)],
    ids=["reaching 66 exactly ends", "65 goes on", "anyone at or above the target ends it"],
)
def test_at_least_the_target_ends_the_game(start: str, over: bool) -> None:
    variant, state, events = _take_55(start)
    assert (variant.outcome(state) is not None) == over
    if over:
        assert isinstance(events[-1], GameEnded)
        assert variant.pending(state) == ()
    else:
        assert isinstance(events[-1], HandScored)
        assert variant.pending(state) == (Decision(CHANCE, DecisionKind.CHANCE, ()),)


def test_a_custom_target() -> None:
    variant, state, _ = _take_55("0 0 0 0", target=7)
    outcome = variant.outcome(state)
    assert outcome is not None
    assert outcome.termination is Termination.TARGET_REACHED


def test_the_target_wins_over_a_remaining_number_of_hands() -> None:
    variant, state, _ = _take_55("0 0 0 0", target=5, hands=3)
    outcome = variant.outcome(state)
    assert outcome is not None
    assert outcome.termination is Termination.TARGET_REACHED


def test_the_last_hand_ends_the_game_below_the_target() -> None:
    variant = Classic(ClassicConfig(target=66, hands=2))
    state = variant.position(
        notation.rows(RICH_ROWS), notation.hands("1 | 90 | 91 | 92"), scores=(0, 0, 0, 0), hand_no=2
    )
    state, _ = variant.apply(state, {0: 1, 1: 90, 2: 91, 3: 92})
    state, _ = variant.apply(state, {0: 3})
    assert variant.outcome(state) == Outcome((5, 0, 0, 0), (4, 1, 1, 1), Termination.HANDS_PLAYED)


@pytest.mark.parametrize("hands", [1, 3])
def test_a_fixed_number_of_hands_without_target(hands: int) -> None:
    variant = Classic(ClassicConfig(players=3, target=None, hands=hands))
    game = Playthrough(variant, seed=11)
    dealt = scored = 0
    totals: tuple[int, ...] = (0, 0, 0)
    while pending := game.pending():
        if pending[0].seat == CHANCE:
            events = game.resolve_chance()
        else:
            events = game.apply({d.seat: variant.default_action(game.state, d) for d in pending})
        for event in events:
            if isinstance(event, HandDealt):
                dealt += 1
                assert event.hand == dealt
            if isinstance(event, HandScored):
                scored += 1
                totals = tuple(t + b for t, b in zip(totals, event.bulls, strict=True))
                assert event.totals == totals
    assert dealt == scored == hands
    outcome = game.outcome()
    assert outcome is not None
    assert outcome.termination is Termination.HANDS_PLAYED
    assert outcome.scores == totals


def test_equal_scores_share_the_rank() -> None:
    variant = Classic(ClassicConfig(players=3))
    state = variant.position(notation.rows(RICH_ROWS), notation.hands("90 | 91 | 1"), scores=(5, 5, 60))
    state, _ = variant.apply(state, {0: 90, 1: 91, 2: 1})
    state, events = variant.apply(state, {2: 0})
    outcome = variant.outcome(state)
    assert outcome == Outcome((5, 5, 67), (1, 1, 3), Termination.TARGET_REACHED)
    assert outcome.winners == (0, 1)
    assert events[-1] == GameEnded((5, 5, 67), (1, 1, 3), "target_reached")


def test_a_new_hand_keeps_the_scores_and_resets_rows_hands_and_piles() -> None:
    variant, state, _ = _take_55("0 3 0 0")
    assert state.piles == ((55,), (), (), ())
    deal = variant.sample_chance(state, SeededChance(5))
    state, events = variant.apply(state, {CHANCE: deal})
    assert isinstance(deal, tuple)
    assert events == (HandDealt(2, tuple((c,) for c in deal[:4])),)
    assert state.scores == (7, 3, 0, 0)
    assert state.piles == ((), (), (), ())
    assert [len(hand) for hand in state.hands] == [10] * 4
    view = variant.view(state, 1)
    assert (view.hand_no, view.turn, view.phase) == (2, 0, "play")
