"""Properties of random classic games (2–10 seats, all options): cards, secrecy, scores, replays."""

from __future__ import annotations

import copy
import dataclasses
import json
from collections import Counter
from collections.abc import Callable
from typing import Any

import classic_games as games
import pytest
import reference
from hypothesis import assume, given
from hypothesis import strategies as st

from games.classic.rules.classic import CardPlaced, Classic, ClassicConfig, ClassicState, ClassicView
from referee.rules.cards import bull_heads
from referee.rules.core import CHANCE, DecisionKind, Termination, event_to_json
from referee.rules.errors import TranscriptError
from referee.rules.transcript import Transcript, replay, verify

VIEW_KEYS = {
    "seat",
    "players",
    "phase",
    "hand_no",
    "turn",
    "hand",
    "rows",
    "piles",
    "scores",
    "revealed",
    "decision",
}
VIEW_FIELDS = VIEW_KEYS | {"top_card", "row_capacity", "hand_size", "professional"}


def _in_flight(state: ClassicState) -> tuple[int, ...]:
    """Revealed cards not yet on the table (while a low card's row is being chosen)."""
    return tuple(card for card, _ in state.revealed[state.placed :])


def _dealt_cards(steps: list[games.Step], upto: int) -> set[int]:
    """The cards of the last deal at or before step ``upto``."""
    for step in reversed(steps[: upto + 1]):
        if CHANCE in step.actions:
            deal = step.actions[CHANCE]
            assert isinstance(deal, tuple)
            return set(deal)
    return set()


def check_cards(variant: Classic, state: ClassicState, dealt: set[int]) -> None:
    """Rows, hands, piles, cards in flight and undealt cards make up the deck, each card once."""
    deck = set(range(1, variant.config.top_card + 1))
    held = Counter(c for part in (*state.rows, *state.hands, *state.piles) for c in part)
    held.update(_in_flight(state))
    assert max(held.values(), default=1) == 1, f"a card is in two places: {held.most_common(3)}"
    assert set(held) == dealt
    assert held + Counter(deck - dealt) == Counter(deck)


def check_views(variant: Classic, state: ClassicState, dealt: set[int]) -> None:
    """Each seat sees its own hand and the public cards, never another hand or the undealt cards."""
    deck = set(range(1, variant.config.top_card + 1))
    pending = {d.seat: d for d in variant.pending(state)}
    for seat in range(variant.players):
        view = variant.view(state, seat)
        data = view.to_json()
        assert set(data) == VIEW_KEYS, "a new view field must be checked for leaks here"
        assert {f.name for f in dataclasses.fields(ClassicView)} == VIEW_FIELDS
        json.dumps(data)
        secret = (deck - dealt).union(*(hand for other, hand in enumerate(state.hands) if other != seat))
        shown = set(data["hand"])
        shown.update(c for row in data["rows"] for c in row)
        shown.update(c for pile in data["piles"] for c in pile)
        shown.update(card for card, _ in data["revealed"])
        if data["decision"] is not None and data["decision"]["kind"] == DecisionKind.CARD.value:
            shown.update(data["decision"]["options"])
        assert not shown & secret, f"seat {seat} sees {sorted(shown & secret)}"
        assert view.hand == state.hands[seat]
        assert (view.rows, view.piles, view.scores) == (state.rows, state.piles, state.scores)
        assert set(view.unseen()) == secret, "unseen() is exactly the other hands and the undealt cards"
        assert view.decision == pending.get(seat)
        if view.decision is not None and view.decision.kind is DecisionKind.CARD:
            assert view.decision.options == view.hand
        if view.phase != "row":
            assert view.revealed == ()


def check_low_card(variant: Classic, state: ClassicState) -> None:
    """A row decision is asked of the owner of a card that fits no row, before later cards are placed."""
    pending = variant.pending(state)
    if not pending or pending[0].kind is not DecisionKind.ROW:
        return
    card, seat = state.revealed[state.placed]
    assert [(d.seat, d.kind) for d in pending] == [(seat, DecisionKind.ROW)]
    assert pending[0].options == tuple(range(variant.config.rows))
    assert all(card < row[-1] for row in state.rows), "the card fits behind a row"
    if variant.config.professional:
        assert all(card > row[0] for row in state.rows), "the card fits left of a row"
    on_table = {c for row in state.rows for c in row}
    assert not on_table & {c for c, _ in state.revealed[state.placed :]}
    assert all(c in on_table for c, _ in state.revealed[: state.placed]), "lower cards are placed first"


def check_scores(variant: Classic, step: games.Step) -> None:
    """Scores never go down; they rise by the bull heads of the cards a seat took."""
    before, after = step.before, step.after
    if CHANCE in step.actions:
        assert after.scores == before.scores
        return
    for seat in range(variant.players):
        gained = after.piles[seat][len(before.piles[seat]) :]
        assert after.piles[seat][: len(before.piles[seat])] == before.piles[seat]
        assert after.scores[seat] - before.scores[seat] == sum(bull_heads(c) for c in gained) >= 0


@games.GAMES
@given(config=games.classic_configs(), seed=games.seeds, policy_seed=st.integers(0, 2**32))
def test_random_games_keep_every_invariant(config: ClassicConfig, seed: int, policy_seed: int) -> None:
    variant = Classic(config)
    state = variant.initial_state()
    check_cards(variant, state, set())
    check_views(variant, state, set())
    game, steps = games.play(variant, seed, games.random_policy(policy_seed))
    for number, step in enumerate(steps):
        dealt = _dealt_cards(steps, number)
        if CHANCE in step.actions:
            assert len(dealt) == config.players * config.hand_size + config.rows
        check_cards(variant, step.after, dealt)
        check_views(variant, step.after, dealt)
        check_low_card(variant, step.after)
        check_scores(variant, step)
    outcome = game.outcome()
    assert outcome is not None
    assert outcome.scores == steps[-1].after.scores
    assert variant.pending(steps[-1].after) == ()


def _turns(variant: Classic, steps: list[games.Step]) -> list[list[games.Step]]:
    """The steps grouped by turn: the cards, then any rule-4 row choices."""
    turns: list[list[games.Step]] = []
    for step in steps:
        kind = variant.pending(step.before)[0].kind
        if kind is DecisionKind.CARD:
            turns.append([step])
        elif kind is DecisionKind.ROW:
            turns[-1].append(step)
    return turns


@games.GAMES
@given(config=games.classic_configs(), seed=games.seeds, policy_seed=st.integers(0, 2**32))
def test_every_turn_agrees_with_the_reference_rules(
    config: ClassicConfig, seed: int, policy_seed: int
) -> None:
    variant = Classic(config)
    _, steps = games.play(variant, seed, games.random_policy(policy_seed))
    for turn in _turns(variant, steps):
        before, after = turn[0].before, turn[-1].after
        plays = {seat: card for seat, card in turn[0].actions.items() if isinstance(card, int)}
        choices = [row for step in turn[1:] for row in step.actions.values() if isinstance(row, int)]
        rows, placed = reference.play_turn(
            before.rows,
            plays,
            iter(choices),
            capacity=config.row_capacity,
            professional=config.professional,
        )
        events = [e for step in turn for e in step.events if isinstance(e, CardPlaced)]
        assert [reference.Placed(e.seat, e.card, e.row, e.left, e.taken) for e in events] == placed
        assert [e.bulls for e in events] == [sum(map(bull_heads, p.taken)) for p in placed]
        assert after.rows == rows


@games.GAMES
@given(config=games.classic_configs(), seed=games.seeds, policy_seed=st.integers(0, 2**32))
def test_same_seed_and_actions_give_the_same_game(config: ClassicConfig, seed: int, policy_seed: int) -> None:
    variant = Classic(config)
    first, first_steps = games.play(variant, seed, games.random_policy(policy_seed))
    second, second_steps = games.play(Classic(config), seed, games.random_policy(policy_seed))
    assert first.transcript().digest() == second.transcript().digest()
    assert [list(map(event_to_json, s.events)) for s in first_steps] == [
        list(map(event_to_json, s.events)) for s in second_steps
    ]
    assert first.state == second.state


@games.GAMES
@given(config=games.classic_configs(), seed=games.seeds, policy_seed=st.integers(0, 2**32))
def test_a_transcript_replays_and_verifies(config: ClassicConfig, seed: int, policy_seed: int) -> None:
    game, steps = games.play(Classic(config), seed, games.random_policy(policy_seed))
    transcript = game.transcript()
    state, events = replay(transcript)
    assert state == game.state
    assert events == [step.events for step in steps]
    assert verify(transcript) == game.outcome()
    again = Transcript.from_json(json.loads(json.dumps(transcript.to_json())))
    assert again == transcript
    assert again.digest() == transcript.digest()
    assert verify(again) == game.outcome()


def test_apply_does_not_change_its_input() -> None:
    variant = Classic(ClassicConfig(players=5, professional=True))
    _, steps = games.play(variant, 99, games.random_policy(3))
    for step in steps:
        kept = copy.deepcopy(step.before)
        variant.apply(step.before, step.actions)
        assert step.before == kept


# -- tampering -----------------------------------------------------------------------------


def _with_steps(transcript: Transcript, steps: list) -> Transcript:
    return dataclasses.replace(transcript, steps=tuple(steps))


def _swap_cards(transcript: Transcript) -> Transcript:
    """Two seats of the first turn play each other's cards."""
    steps = list(transcript.steps)
    index = next(i for i, step in enumerate(steps) if step[0][0] != CHANCE and len(step) > 1)
    (seat_a, card_a), (seat_b, card_b), *rest = steps[index]
    steps[index] = ((seat_a, card_b), (seat_b, card_a), *rest)
    return _with_steps(transcript, steps)


def _card_not_in_hand(transcript: Transcript) -> Transcript:
    steps = list(transcript.steps)
    index = next(i for i, step in enumerate(steps) if step[0][0] != CHANCE)
    (seat, _), *rest = steps[index]
    steps[index] = ((seat, 0), *rest)
    return _with_steps(transcript, steps)


def _row_out_of_range(transcript: Transcript) -> Transcript:
    """Every rule-4 choice names a row that is not on the table."""
    steps = [
        ((step[0][0], 99),) if len(step) == 1 and step[0][0] != CHANCE else step for step in transcript.steps
    ]
    return _with_steps(transcript, steps)


def _reordered_deal(transcript: Transcript) -> Transcript:
    """A legal deal, but not the one the seed gives: a row card and a hand card swapped."""
    steps = list(transcript.steps)
    ((seat, deal),) = steps[0]
    assert isinstance(deal, tuple)
    steps[0] = ((seat, (deal[-1], *deal[1:-1], deal[0])),)
    return _with_steps(transcript, steps)


def _claimed(transcript: Transcript, **changes: Any) -> Transcript:
    assert transcript.outcome is not None
    return dataclasses.replace(transcript, outcome=dataclasses.replace(transcript.outcome, **changes))


def _bumped_scores(transcript: Transcript) -> Transcript:
    assert transcript.outcome is not None
    return _claimed(transcript, scores=(transcript.outcome.scores[0] + 1, *transcript.outcome.scores[1:]))


def _other_ranks(transcript: Transcript) -> Transcript:
    assert transcript.outcome is not None
    return _claimed(transcript, ranks=tuple(rank + 1 for rank in transcript.outcome.ranks))


def _other_termination(transcript: Transcript) -> Transcript:
    assert transcript.outcome is not None
    if transcript.outcome.termination is Termination.TARGET_REACHED:
        return _claimed(transcript, termination=Termination.HANDS_PLAYED)
    return _claimed(transcript, termination=Termination.TARGET_REACHED)


def _undealt_card_in_deal(transcript: Transcript) -> Transcript:
    steps = list(transcript.steps)
    ((seat, deal),) = steps[0]
    assert isinstance(deal, tuple)
    steps[0] = ((seat, (*deal[:-1], 1000)),)
    return _with_steps(transcript, steps)


TAMPERS: dict[str, Callable[[Transcript], Transcript]] = {
    "swapped cards": _swap_cards,
    "card not in hand": _card_not_in_hand,
    "row choice out of range": _row_out_of_range,
    "chance outcome reordered": _reordered_deal,
    "chance outcome with a card not in the deck": _undealt_card_in_deal,
    "seed changed": lambda t: dataclasses.replace(t, seed=t.seed + 1),
    "truncated by one step": lambda t: _with_steps(t, list(t.steps[:-1])),
    "truncated to half": lambda t: _with_steps(t, list(t.steps[: len(t.steps) // 2])),
    "a step after the end": lambda t: _with_steps(t, [*t.steps, t.steps[-1]]),
    "claimed scores changed": _bumped_scores,
    "claimed ranks changed": _other_ranks,
    "claimed termination changed": _other_termination,
    "engine version changed": lambda t: dataclasses.replace(t, engine_version=t.engine_version + 1),
    "players changed": lambda t: dataclasses.replace(
        t, config={**t.config, "players": t.config["players"] + 1}
    ),
    "unknown variant": lambda t: dataclasses.replace(t, variant="chess"),
    "invalid config": lambda t: dataclasses.replace(t, config={**t.config, "rows": 0}),
}


@pytest.mark.parametrize("tamper", TAMPERS, ids=list(TAMPERS))
@games.GAMES
@given(players=st.integers(2, 9), seed=games.seeds, policy_seed=st.integers(0, 2**32))
def test_verify_rejects_a_tampered_transcript(tamper: str, players: int, seed: int, policy_seed: int) -> None:
    variant = Classic(ClassicConfig(players=players, target=30))
    game, _ = games.play(variant, seed, games.random_policy(policy_seed))
    genuine = game.transcript()
    forged = TAMPERS[tamper](genuine)
    assume(forged != genuine)  # e.g. a game without a low card has no row choice to change
    assert forged.digest() != genuine.digest()
    with pytest.raises(TranscriptError):
        verify(forged)


def test_the_tamper_with_a_row_choice_applies_to_a_game_with_a_low_card() -> None:
    """Guard for the table above: a 'row choice' step exists in these games."""
    game, _ = games.play(Classic(ClassicConfig(players=4, target=30)), 1, games.random_policy(1))
    assert any(len(step) == 1 and step[0][0] != CHANCE for step in game.transcript().steps)


def test_meta_is_not_part_of_the_digest() -> None:
    game, _ = games.play(Classic(ClassicConfig(players=3, hands=1)), 8, games.default_policy)
    assert game.transcript(meta={"seat names": ["a", "b", "c"]}).digest() == game.transcript().digest()
    assert verify(game.transcript(meta={"faults": [1]})) == game.outcome()


def test_a_malformed_transcript_is_a_transcript_error() -> None:
    game, _ = games.play(Classic(ClassicConfig(players=2, hands=1)), 8, games.default_policy)
    data = game.transcript().to_json()
    for broken in (
        {**data, "format": 99},
        {k: v for k, v in data.items() if k != "steps"},
        {**data, "steps": [[[0, "fourteen"]]]},
        {**data, "outcome": {"scores": [1, 2], "ranks": [1, 2], "termination": "bored"}},
    ):
        with pytest.raises(TranscriptError):
            Transcript.from_json(broken)
    with pytest.raises(TranscriptError):
        replay(_card_not_in_hand(game.transcript()))
