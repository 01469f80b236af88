"""Views show what a seat may know: never the draw pile, never another seat's hand."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from games.junior.rules.junior import Junior, JuniorState
from referee.rules import NotPendingError, event_to_json, make_variant

from .games import random_steps

NAMES = ["junior-basic", "junior-advanced", "junior-experts"]


def _hidden_swaps(state: JuniorState, seat: int) -> list[JuniorState]:
    """States that differ from ``state`` only in what ``seat`` cannot see."""
    out = []
    for other, hand in enumerate(state.hands):
        if other == seat or not hand or not state.pile:
            continue
        hands = list(state.hands)
        hands[other] = tuple(sorted((*hand[1:], state.pile[0])))
        pile = tuple(sorted((*state.pile[1:], hand[0])))
        out.append(state._replace(hands=tuple(hands), pile=pile))
    if state.pile:
        out.append(state._replace(pile=state.pile[1:]))  # even the pile's contents stay hidden...
    return out


@settings(max_examples=15, deadline=None)
@given(st.sampled_from(NAMES), st.integers(2, 6), st.integers(0, 2**32))
def test_views_do_not_change_with_what_the_seat_cannot_see(name: str, players: int, seed: int) -> None:
    game: Junior[Any] = make_variant(name, {"players": players})  # type: ignore[assignment]
    for _, _, _, state, _ in random_steps(game, seed):
        for seat in range(players):
            view = game.view(state, seat)
            assert view.hand == state.hands[seat]
            assert view.pile_size == len(state.pile)
            assert sorted(view.unseen()) == sorted(
                [*state.pile, *(c for s, hand in enumerate(state.hands) if s != seat for c in hand)]
            )
            for other in _hidden_swaps(state, seat):
                changed = game.view(other, seat)
                if other.pile != state.pile and len(other.pile) != len(state.pile):
                    # ...except for its size, which everyone sees.
                    assert changed.to_json() == {**view.to_json(), "pile_size": len(other.pile)}
                else:
                    assert changed == view and changed.to_json() == view.to_json()


@settings(max_examples=15, deadline=None)
@given(st.sampled_from(NAMES), st.integers(2, 6), st.integers(0, 2**32))
def test_events_never_name_a_card_in_a_hand(name: str, players: int, seed: int) -> None:
    """Events are public: a drawn card stays secret until it is played."""
    game: Junior[Any] = make_variant(name, {"players": players})  # type: ignore[assignment]
    for _, _, _, after, events in random_steps(game, seed):
        secret = {c for hand in after.hands for c in hand} | set(after.pile)
        for event in events:
            named = _ints(event_to_json(event), skip={"seat", "row", "total", "pile", "hand_size"})
            assert not named & secret, event


def _ints(value: Any, skip: set[str]) -> set[int]:
    if isinstance(value, dict):
        return {i for k, v in value.items() if k not in skip for i in _ints(v, skip)}
    if isinstance(value, list):
        return {i for v in value for i in _ints(v, skip)}
    return {value} if type(value) is int else set()


@pytest.mark.parametrize("name", NAMES)
def test_a_view_is_json_and_names_only_its_own_decision(name: str) -> None:
    game: Junior[Any] = make_variant(name)  # type: ignore[assignment]
    for _, _, _, state, _ in random_steps(game, 4):
        pending = {d.seat for d in game.pending(state)}
        for seat in range(game.players):
            view = game.view(state, seat)
            data = json.loads(json.dumps(view.to_json()))
            assert "pile" not in data and data["hand"] == list(state.hands[seat])
            assert (view.decision is not None) == (seat in pending)
            if view.decision is not None:
                assert all(o in view.decision.options for o in _options(data))
    with pytest.raises(NotPendingError):
        game.view(game.initial_state(), game.players)


def _options(data: dict[str, Any]) -> list[Any]:
    return [tuple(o) if isinstance(o, list) else o for o in data["decision"]["options"]]


def test_the_face_up_card_is_everyones_and_rows_for_matches_the_decision() -> None:
    game: Junior[Any] = make_variant("junior-experts")  # type: ignore[assignment]
    for _, _, _, state, _ in random_steps(game, 9):
        if state.card is None:
            continue
        views = [game.view(state, seat) for seat in range(game.players)]
        assert {v.card for v in views} == {state.card}
        mover = views[state.seat]
        assert mover.decision is not None
        assert mover.rows_for(state.card) == mover.decision.options
