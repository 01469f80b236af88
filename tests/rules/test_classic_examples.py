"""The rulebooks' worked examples and the options' rules, as table-driven cases.

Each case sets up a position (rows, and the cards each seat plays), plays its turns and
answers every rule-4 decision from the table, then checks where each card went, the rows and
the bull heads. Rows are numbered from 0 as the engine counts: the rulebook's "second row" is
row 1. The notation is in ``notation.py``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import notation
import pytest

from games.classic.rules.classic import CardPlaced, CardsRevealed, Classic, ClassicConfig, ClassicState
from referee.rules.cards import bull_heads
from referee.rules.chance import SeededChance
from referee.rules.core import Decision, DecisionKind, Event
from referee.rules.errors import ConfigError


@dataclass(frozen=True)
class Turn:
    """One turn: the card of each seat (seat order) and what must follow."""

    plays: str
    placed: str
    """Where each card went, in placement order (see ``notation.placements``)."""
    rows: str
    """The rows after the turn."""
    scores: str
    """Each seat's bull heads after the turn."""
    choose: Mapping[int, int] = field(default_factory=dict)
    """Rule 4: low card → the row its owner takes."""
    asked: str | None = None
    """The rows when the rule-4 decision is asked; by default the rows before the turn."""


@dataclass(frozen=True)
class Case:
    name: str
    rows: str
    turns: tuple[Turn, ...]
    config: ClassicConfig = field(default_factory=ClassicConfig)
    scores: str | None = None
    """Scores at the start; zero by default."""


FIGURE_1 = "12 | 37 | 43 | 58"
FIGURE_2 = "12 14 15 | 37 | 43 44 | 58 61"
FIGURE_3 = "30 36 | 37 | 43 44 | 58 61"
FIGURE_4 = "30 36 | 3 9 | 43 44 | 58 61 68 83"

ROUND_1 = Turn(
    plays="14 15 44 61",
    placed="14>0 15>0 44>2 61>3",  # 14, 15: rule 1; 44: rule 2 (43 closest of 12 37 43)
    rows=FIGURE_2,
    scores="0 0 0 0",
)
ROUND_2 = Turn(
    plays="21 26 30 36",
    placed="21>0 26>0 30>0! 36>0",  # the 30 is the sixth card of the first row (rule 3)
    rows=FIGURE_3,
    scores="0 0 6 0",  # 12 14 15 21 26: 1 + 1 + 2 + 1 + 1
)
ROUND_3 = Turn(
    plays="3 9 68 83",
    choose={3: 1},  # the 3 fits no row (rule 4); its owner takes the second row, the 37
    placed="3>1! 9>1 68>3 83>3",
    rows=FIGURE_4,
    scores="1 0 6 0",
)

# Figure 5: the 45 fits behind the 41 (row 2) but the 42 (row 3, full) is closer.
TRAP_1 = "7 13 19 | 47 52 | 31 35 41 | 32 36 38 40 42"
# Figure 6: the 62 belongs behind the 60 (row 0); row 3 is full and ends with the next best 57.
TRAP_2 = "33 48 60 | 66 71 | 38 52 | 30 41 44 50 57"

CASES = [
    Case("003 figures 1-4 as one sequence", FIGURE_1, (ROUND_1, ROUND_2, ROUND_3)),
    Case("003 figure 1 -> 2: rules 1 and 2", FIGURE_1, (ROUND_1,)),
    Case("003 figure 2 -> 3: rule 3, full row", FIGURE_2, (ROUND_2,)),
    Case(
        "003 figure 3 -> 4: rule 4, low card",
        FIGURE_3,
        (Turn("3 9 68 83", choose={3: 1}, placed="3>1! 9>1 68>3 83>3", rows=FIGURE_4, scores="1 0 0 0"),),
    ),
    # Rule 4 is a real choice: each row the 3 may take gives another table and penalty.
    Case(
        "figure 3, the 3 takes row 0 (30 36: 4 bull heads)",
        FIGURE_3,
        (
            Turn(
                "3 9 68 83",
                choose={3: 0},
                placed="3>0! 9>0 68>3 83>3",
                rows="3 9 | 37 | 43 44 | 58 61 68 83",
                scores="4 0 0 0",
            ),
        ),
    ),
    Case(
        "figure 3, the 3 takes row 2 (43 44: 6 bull heads)",
        FIGURE_3,
        (
            Turn(
                "3 9 68 83",
                choose={3: 2},
                placed="3>2! 9>2 68>3 83>3",
                rows="30 36 | 37 | 3 9 | 58 61 68 83",
                scores="6 0 0 0",
            ),
        ),
    ),
    Case(
        "figure 3, the 3 takes row 3 (58 61: 2 bull heads), 68 then goes behind the 44",
        FIGURE_3,
        (
            Turn(
                "3 9 68 83",
                choose={3: 3},
                placed="3>3! 9>3 68>2 83>2",
                rows="30 36 | 37 | 43 44 68 83 | 3 9",
                scores="2 0 0 0",
            ),
        ),
    ),
    Case(
        "003 trap 1: the 45 goes behind the 42 on the full row, not behind the 41",
        TRAP_1,
        (Turn("45 60", placed="45>3! 60>1", rows="7 13 19 | 47 52 60 | 31 35 41 | 45", scores="7 0"),),
        ClassicConfig(players=2),
    ),
    Case(
        "003 trap 2 without the 29: the 62 would go behind the 60",
        TRAP_2,
        (
            Turn(
                "62 80",
                placed="62>0 80>1",
                rows="33 48 60 62 | 66 71 80 | 38 52 | 30 41 44 50 57",
                scores="0 0",
            ),
        ),
        ClassicConfig(players=2),
    ),
    Case(
        "003 trap 2: the 29 takes row 0 first, so the 62 lands on the full row 3",
        TRAP_2,
        (
            Turn(
                "62 29", choose={29: 0}, placed="29>0! 62>3!", rows="29 | 66 71 | 38 52 | 62", scores="13 9"
            ),
        ),  # 30 41 44 50 57: 3 + 1 + 5 + 3 + 1; 33 48 60: 5 + 1 + 3
        ClassicConfig(players=2),
    ),
    Case(
        "the fifth card fills a row, the sixth takes it",
        "10 | 20 | 30 | 40 41 42 43",
        (Turn("104 50", placed="50>3 104>3!", rows="10 | 20 | 30 | 104", scores="9 0"),),
        ClassicConfig(players=2),  # 40 41 42 43 50: 3 + 1 + 1 + 1 + 3
    ),
    Case(
        "two rule-3 takes in one turn, the second of the new row",
        "1 2 3 4 5 | 90 | 95 | 100",
        (
            Turn(
                "6 7 8 9 10 11",
                placed="6>0! 7>0 8>0 9>0 10>0 11>0!",
                rows="11 | 90 | 95 | 100",
                scores="6 0 0 0 0 7",
            ),
        ),
        ClassicConfig(players=6),  # 1 2 3 4 5: 1+1+1+1+2; 6 7 8 9 10: 1+1+1+1+3
    ),
    Case(
        "row capacity 3: the fourth card takes the row",
        "1 2 3 | 50 | 60 | 70",
        (Turn("4 51", placed="4>0! 51>1", rows="4 | 50 51 | 60 | 70", scores="3 0"),),
        ClassicConfig(players=2, row_capacity=3),
    ),
    # Professional: a card may also go on a row's left end (descending), the smallest gap decides.
    Case(
        "professional: a card below every row goes on the left of the closest first card",
        "20 25 | 40 | 60 | 80",
        (Turn("18 90", placed="18<0 90>3", rows="18 20 25 | 40 | 60 | 80 90", scores="0 0"),),
        ClassicConfig(players=2, professional=True),
    ),
    Case(
        "professional: the left end wins when its gap is smaller",
        "10 30 | 40 45 | 60 | 80",
        (Turn("39 31", placed="31>0 39<1", rows="10 30 31 | 39 40 45 | 60 | 80", scores="0 0"),),
        ClassicConfig(players=2, professional=True),
    ),
    Case(
        "professional: on a tie the right end wins (project default)",
        "10 33 | 37 45 | 60 | 80",
        (Turn("35 81", placed="35>0 81>3", rows="10 33 35 | 37 45 | 60 | 80 81", scores="0 0"),),
        ClassicConfig(players=2, professional=True),
    ),
    Case(
        "professional: the sixth card on the left takes the row",
        "20 21 23 24 26 | 40 | 60 | 80",
        (Turn("18 90", placed="18<0! 90>3", rows="18 | 40 | 60 | 80 90", scores="7 0"),),
        ClassicConfig(players=2, professional=True),  # 20 21 23 24 26: 3+1+1+1+1
    ),
    Case(
        "professional: rule 4 only when a card fits neither end of any row",
        "10 40 | 20 50 | 25 70 | 27 80",
        (
            Turn(
                "30 90",
                choose={30: 0},
                placed="30>0! 90>3",
                rows="30 | 20 50 | 25 70 | 27 80 90",
                scores="6 0",
            ),
        ),  # 10 40: 3 + 3
        ClassicConfig(players=2, professional=True),
    ),
    Case(
        "professional: the low card's row is asked after the lower cards are placed, before the rest",
        "10 40 | 20 50 | 25 70 | 27 80",
        (
            Turn(
                "5 30 90",
                choose={30: 1},
                asked="5 10 40 | 20 50 | 25 70 | 27 80",
                placed="5<0 30>1! 90>3",
                rows="5 10 40 | 30 | 25 70 | 27 80 90",
                scores="0 6 0",
            ),
        ),
        ClassicConfig(players=3, professional=True),
    ),
    Case(
        "classic: the same table without the option, 5 is a low card",
        "10 40 | 20 50 | 25 70 | 27 80",
        (
            Turn(
                "5 30 90",
                choose={5: 0},
                placed="5>0! 30>0 90>3",
                rows="5 30 | 20 50 | 25 70 | 27 80 90",
                scores="6 0 0",
            ),
        ),
        ClassicConfig(players=3),
    ),
    # Tactics: only cards 1 … 10·players + 4 are in play; the top card plays as usual.
    Case(
        "tactics, 2 players: the deck ends at 24",
        "3 | 8 | 12 | 20",
        (Turn("24 1", choose={1: 0}, placed="1>0! 24>3", rows="1 | 8 | 12 | 20 24", scores="0 1"),),
        ClassicConfig(players=2, tactics=True),
    ),
]


def _hands(case: Case) -> tuple[tuple[int, ...], ...]:
    """Each seat holds exactly the cards it plays in the case's turns."""
    plays = [notation.cards(turn.plays) for turn in case.turns]
    return tuple(tuple(turn[seat] for turn in plays) for seat in range(case.config.players))


def _placements(events: list[Event]) -> tuple[notation.Placement, ...]:
    return tuple(
        notation.Placement(e.card, e.row, e.left, bool(e.taken)) for e in events if isinstance(e, CardPlaced)
    )


def _answer_low_cards(
    variant: Classic, state: ClassicState, turn: Turn, before: ClassicState, events: list[Event]
) -> ClassicState:
    """Answer the rule-4 decisions of a turn from the table, checking how each is asked."""
    plays = notation.cards(turn.plays)
    revealed = tuple(sorted((card, seat) for seat, card in enumerate(plays)))
    asked_rows = notation.rows(turn.asked) if turn.asked is not None else before.rows
    used = set()
    while (pending := variant.pending(state)) and pending[0].kind is DecisionKind.ROW:
        (decision,) = pending
        card = plays[decision.seat]
        assert card in turn.choose, f"unexpected rule-4 decision for the {card}"
        assert decision == Decision(decision.seat, DecisionKind.ROW, tuple(range(variant.config.rows)))
        for seat in range(variant.players):
            view = variant.view(state, seat)
            assert view.phase == "row"
            assert view.revealed == revealed, "every seat sees all of the turn's cards"
            assert view.to_json()["revealed"] == [list(pair) for pair in revealed]
            assert view.decision == (decision if seat == decision.seat else None)
            assert view.rows == asked_rows, (
                f"asked with rows {notation.show(view.rows)}, expected {notation.show(asked_rows)}"
            )
        if turn.asked is None:
            assert not any(isinstance(e, CardPlaced) for e in events), "no card is placed before"
        state, step_events = variant.apply(state, {decision.seat: turn.choose[card]})
        events.extend(step_events)
        used.add(card)
    assert used == set(turn.choose), f"rule-4 choices never asked: {set(turn.choose) - used}"
    return state


@pytest.mark.parametrize("case", CASES, ids=[case.name for case in CASES])
def test_rulebook_case(case: Case) -> None:
    variant = Classic(case.config)
    start_scores = notation.numbers(case.scores) if case.scores else None
    state = variant.position(notation.rows(case.rows), _hands(case), scores=start_scores)
    for number, turn in enumerate(case.turns, 1):
        before = state
        state, first = variant.apply(state, dict(enumerate(notation.cards(turn.plays))))
        assert isinstance(first[0], CardsRevealed)
        events = list(first)
        state = _answer_low_cards(variant, state, turn, before, events)
        where = f"{case.name}, turn {number}"
        placed = _placements(events)
        expected = notation.placements(turn.placed)
        assert notation.show_placements(placed) == notation.show_placements(expected), where
        assert notation.show(state.rows) == notation.show(notation.rows(turn.rows)), where
        assert state.scores == notation.numbers(turn.scores), where
        for event in events:
            if isinstance(event, CardPlaced):
                assert event.bulls == sum(bull_heads(c) for c in event.taken), where


def test_the_rulebook_sequence_ends_the_hand_with_the_piles_scored() -> None:
    """After the three rounds, seat 2 holds 12 14 15 21 26 and seat 0 the 37."""
    variant = Classic(ClassicConfig(hands=1))
    state = variant.position(notation.rows(FIGURE_1), _hands(CASES[0]))
    for turn in (ROUND_1, ROUND_2, ROUND_3):
        state, _ = variant.apply(state, dict(enumerate(notation.cards(turn.plays))))
    state, _ = variant.apply(state, {0: 1})
    assert state.piles == ((37,), (), (12, 14, 15, 21, 26), ())
    outcome = variant.outcome(state)
    assert outcome is not None
    assert outcome.scores == (1, 0, 6, 0)
    assert outcome.ranks == (3, 1, 4, 1)
    assert variant.pending(state) == ()


def test_a_low_card_is_a_decision_of_its_owner_not_of_the_first_seat() -> None:
    variant = Classic()
    state = variant.position(notation.rows(FIGURE_3), notation.hands("68 | 83 | 9 | 3"))
    state, events = variant.apply(state, {0: 68, 1: 83, 2: 9, 3: 3})
    assert events == (CardsRevealed(1, 10, ((3, 3), (9, 2), (68, 0), (83, 1))),)
    assert variant.pending(state) == (Decision(3, DecisionKind.ROW, (0, 1, 2, 3)),)
    assert [variant.view(state, seat).decision for seat in range(3)] == [None, None, None]


def test_the_default_row_choice_takes_the_fewest_bull_heads() -> None:
    variant = Classic()
    state = variant.position(notation.rows(FIGURE_3), notation.hands("3 | 9 | 68 | 83"))
    state, _ = variant.apply(state, {0: 3, 1: 9, 2: 68, 3: 83})
    (decision,) = variant.pending(state)
    assert variant.default_action(state, decision) == 1  # the 37: one bull head


def test_the_default_row_choice_prefers_the_first_row_on_a_tie() -> None:
    variant = Classic(ClassicConfig(players=2))
    state = variant.position(notation.rows("12 | 13 | 14 | 16"), notation.hands("1 | 50"))
    state, _ = variant.apply(state, {0: 1, 1: 50})
    (decision,) = variant.pending(state)
    assert variant.default_action(state, decision) == 0


@pytest.mark.parametrize(("players", "top"), [(2, 24), (3, 34), (4, 44), (7, 74), (10, 104)])
def test_tactics_uses_cards_up_to_ten_per_player_plus_four(players: int, top: int) -> None:
    variant = Classic(ClassicConfig(players=players, tactics=True))
    assert variant.config.top_card == top
    deal = variant.sample_chance(variant.initial_state(), SeededChance(7))
    assert isinstance(deal, tuple)
    assert sorted(deal) == list(range(1, top + 1)), "a Tactics deal uses every card of the smaller deck"
    state, _ = variant.apply(variant.initial_state(), {-1: deal})
    assert variant.view(state, 0).top_card == top
    with pytest.raises(ConfigError):
        variant.position([[1], [2], [3], [top + 1]], [[5 + seat] for seat in range(players)])


def test_without_tactics_the_deck_is_1_to_104() -> None:
    assert Classic(ClassicConfig(players=2)).config.top_card == 104


def test_the_notation_reads_and_writes_rows_and_placements() -> None:
    assert notation.rows("12 14 15 | 37 | 43 44 | 58 61") == ((12, 14, 15), (37,), (43, 44), (58, 61))
    assert notation.show(((12, 14, 15), (), (43,))) == "12 14 15 | - | 43"
    assert notation.hands("- | 3 9") == ((), (3, 9))
    text = "21>0 30>0! 5<2 18<0!"
    assert [tuple(p) for p in notation.placements(text)] == [
        (21, 0, False, False),
        (30, 0, False, True),
        (5, 2, True, False),
        (18, 0, True, True),
    ]
    assert notation.show_placements(notation.placements(text)) == text
    with pytest.raises(ValueError, match="not a placement"):
        notation.placements("30->0")
