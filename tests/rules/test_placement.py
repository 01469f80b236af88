"""The one placement rule (referee.rules.placement) against the engine, the reference and itself."""

from __future__ import annotations

import itertools

import classic_games as games
import reference
from hypothesis import given, settings
from hypothesis import strategies as st

from games.classic.rules.classic import CardPlaced, Classic, ClassicConfig, RowChosen
from referee.rules.core import CHANCE
from referee.rules.placement import LOW, ascending_row, ascending_run, placement

Table = tuple[list[tuple[int, ...]], int]


@st.composite
def tables(draw: st.DrawFn) -> Table:
    """Rows of distinct cards (each ascending, as on the table), and a card on none of them."""
    top = draw(st.sampled_from([12, 30, 120]))  # a small deck makes equal distances (ties) likely
    cards = draw(st.lists(st.integers(1, top), min_size=2, max_size=min(top, 40), unique=True))
    card, rest = cards[0], cards[1:]
    count = draw(st.integers(1, min(8, len(rest))))
    cuts = sorted(draw(st.lists(st.integers(1, max(1, len(rest) - 1)), max_size=count - 1, unique=True)))
    bounds = [0, *cuts, len(rest)]
    rows = [tuple(sorted(rest[a:b])) for a, b in itertools.pairwise(bounds) if b > a]
    return rows, card


MANY = settings(max_examples=1000, deadline=None)


@MANY
@given(table=tables(), professional=st.booleans())
def test_placement_is_the_reference_rule(table: Table, professional: bool) -> None:
    """One card on any rows: the written-from-the-rulebook reference places it in the same row end."""
    rows, card = table
    _, placed = reference.play_turn(rows, {0: card}, iter([0]), capacity=99, professional=professional)
    row, left = placement(card, rows, professional)
    fits = any(r[-1] < card for r in rows) or (professional and any(r[0] > card for r in rows))
    if not fits:
        assert (row, left) == (LOW, False)
    else:
        assert (row, left) == (placed[0].row, placed[0].left)


@MANY
@given(table=tables())
def test_the_run_is_rules_1_and_2_and_holds_up_to_its_limit(table: Table) -> None:
    rows, card = table
    row, limit = ascending_run(card, rows)
    lasts = [r[-1] for r in rows]
    below = [last for last in lasts if last < card]
    assert row == (lasts.index(max(below)) if below else LOW)
    above = [last for last in lasts if last > card]
    assert limit == min(above) if above else limit > max(lasts)
    assert placement(card, rows) == (row, False)
    assert ascending_row(card, lasts) == row
    # Every card up to the limit goes to the same row.
    for other in range(card + 1, min(limit, card + 30)):
        if other not in lasts:
            assert ascending_run(other, rows)[0] == row


def test_a_row_ending_in_zero_takes_no_card() -> None:
    """The board game's stopped and empty rows."""
    assert ascending_row(5, [0, 3, 0]) == 1
    assert ascending_row(2, [0, 3, 0]) == LOW
    assert ascending_run(2, [(0,), (3,)]) == (LOW, 3)


def test_professional_ties_go_behind() -> None:
    # 20 is 2 above the 18 and 2 below the 22: behind the 18 (the classic placement).
    assert placement(20, [(10, 18), (22, 30)], professional=True) == (0, False)
    assert placement(21, [(10, 18), (22, 30)], professional=True) == (1, True)
    assert placement(5, [(10, 18), (22, 30)], professional=True) == (0, True)
    assert placement(5, [(10, 18), (22, 30)]) == (LOW, False)


def _replayed_rows(rows: list[tuple[int, ...]], event: CardPlaced) -> None:
    if event.taken:
        rows[event.row] = (event.card,)
    elif event.left:
        rows[event.row] = (event.card, *rows[event.row])
    else:
        rows[event.row] = (*rows[event.row], event.card)


@games.GAMES
@given(config=games.classic_configs(), seed=games.seeds, policy_seed=st.integers(0, 2**32))
def test_the_engine_places_every_card_where_placement_says(
    config: ClassicConfig, seed: int, policy_seed: int
) -> None:
    """Every card of random games, on the rows as they are when it is placed."""
    variant = Classic(config)
    _, steps = games.play(variant, seed, games.random_policy(policy_seed))
    checked = 0
    for step in steps:
        if CHANCE in step.actions:
            continue
        rows = list(step.before.rows)
        chosen = False
        for event in step.events:
            if isinstance(event, RowChosen):
                assert placement(event.card, rows, config.professional) == (LOW, False)
                chosen = True
            elif isinstance(event, CardPlaced):
                if chosen:
                    chosen = False
                else:
                    assert placement(event.card, rows, config.professional) == (event.row, event.left)
                    checked += 1
                _replayed_rows(rows, event)
        assert tuple(rows) == step.after.rows
        if step.after.phase == 2:  # a low card waits for its row: it fits nowhere
            card, _ = step.after.revealed[step.after.placed]
            assert placement(card, rows, config.professional)[0] == LOW
    assert checked, "every turn places a card by the rules (only its first card can be low)"
