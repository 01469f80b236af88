"""Junior over the wire: views and events survive the trip, and real processes play real games.

Round trips go domain → proto → bytes → proto → domain through the same functions the referee
and the SDK call; the end-to-end tests start a referee and one process per bot.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import pytest

from arena.matches import MatchPlan, play_matches
from arena.tournament import run_tournament
from games.junior.rules.junior import (
    CardDrawn,
    CardPlaced,
    CardPlayed,
    CardsDealt,
    CardTurned,
    GameEnded,
    Junior,
    JuniorView,
    RowCollected,
)
from games.junior.rules.junior_deck import DEFAULT_DECK, load_deck
from referee import wire
from referee.rules import CHANCE, make_variant
from referee.rules.transcript import Transcript, verify
from sixnimmt.v1 import game_pb2

from .games import random_steps

MODES: list[tuple[str, dict[str, Any]]] = [
    ("junior-basic", {"players": 3}),
    ("junior-advanced", {"players": 4}),
    ("junior-advanced", {"players": 2, "nuisance": True}),
    ("junior-experts", {"players": 6}),
    ("junior-experts", {"players": 2, "row_limit": 3}),
]

EVENT_TYPES = {
    "junior-basic": {CardTurned, CardPlaced, RowCollected, GameEnded},
    "junior-advanced": {CardsDealt, CardDrawn, CardPlaced, RowCollected, GameEnded},
    "junior-experts": {CardsDealt, CardDrawn, CardPlayed, CardPlaced, RowCollected, GameEnded},
}


def _inline_deck() -> dict[str, Any]:
    """The bundled deck as a structure under another name: a deck the SDK cannot look up."""
    return {**load_deck(DEFAULT_DECK).to_json(), "name": "my printed deck"}


def _event_trip(name: str, event: Any, step: int) -> Any:
    out: list[game_pb2.MatchEvent] = []
    wire.events_to_wire(name, "m1", step, (event,), out)
    (message,) = out
    parsed = game_pb2.MatchEvent.FromString(message.SerializeToString())
    assert parsed.match_id == "m1" and parsed.step == step
    assert parsed.WhichOneof("payload") == "junior"
    return wire.event_from_wire(parsed)


def _first_request(game: Junior[Any], seed: int) -> JuniorView:
    """The view sent with a game's first request to a seat."""
    for _, _, _, state, _ in random_steps(game, seed):
        for decision in game.pending(state):
            if decision.seat != CHANCE:
                return game.view(state, decision.seat)
    raise AssertionError("no seat was ever asked")


def _request_trip(name: str, view: JuniorView) -> tuple[game_pb2.DecisionRequest, Any]:
    assert view.decision is not None
    out = game_pb2.DecisionRequest()
    wire.request_to_wire(7, "m1", name, view.decision, view, 2000, 10_000, out)
    parsed = game_pb2.DecisionRequest.FromString(out.SerializeToString())
    assert wire.decision_from_wire(parsed) == view.decision
    return parsed, wire.view_from_wire(parsed)


def _view_trip(name: str, view: JuniorView) -> Any:
    """Any seat's view (pending or not) through the codec alone."""
    codec = wire.codec(name)
    out = game_pb2.DecisionRequest()
    codec.view_to_wire(view, out)
    parsed = game_pb2.DecisionRequest.FromString(out.SerializeToString())
    return codec.view_from_wire(parsed, view.decision)  # type: ignore[arg-type]


@pytest.mark.parametrize(("name", "config"), MODES)
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_every_view_and_event_of_random_games_survives_the_wire(
    name: str, config: dict[str, Any], seed: int
) -> None:
    game: Junior[Any] = make_variant(name, config)  # type: ignore[assignment]
    seen: set[type] = set()
    requests = 0
    for step, (_, _, _, after, events) in enumerate(random_steps(game, seed), start=1):
        for event in events:
            assert _event_trip(name, event, step) == event
            seen.add(type(event))
        for seat in range(game.players):
            view = game.view(after, seat)
            assert _view_trip(name, view) == view
        for decision in game.pending(after):
            if decision.seat == CHANCE:
                continue
            view = game.view(after, decision.seat)
            _, back = _request_trip(name, view)
            assert back == view and back.to_json() == view.to_json()
            assert back.deck.masks == view.deck.masks
            requests += 1
    assert requests > 0
    assert seen == EVENT_TYPES[name]


@pytest.mark.parametrize("name", ["junior-basic", "junior-advanced", "junior-experts"])
def test_the_whole_events_of_a_game_go_out_in_one_batch_and_come_back_in_order(name: str) -> None:
    game: Junior[Any] = make_variant(name, {"players": 3})  # type: ignore[assignment]
    for step, (_, _, _, _, events) in enumerate(random_steps(game, 5), start=1):
        out: list[game_pb2.MatchEvent] = []
        wire.events_to_wire(name, "m2", step, events, out)
        assert tuple(wire.event_from_wire(m) for m in out) == events


def test_card_zero_is_a_card_and_no_card_is_none() -> None:
    game: Junior[Any] = make_variant("junior-experts", {"players": 2})  # type: ignore[assignment]
    state = game.position([[1], [2], [3], [4]], [[0, 5, 6], [7, 8, 9]])
    view = game.view(state, 0)
    assert view.card is None
    assert _request_trip("junior-experts", view)[1].card is None
    zero = dataclasses.replace(view, card=0)
    assert _view_trip("junior-experts", zero).card == 0


def test_a_bundled_deck_goes_by_name_and_any_other_deck_as_json(tmp_path: Path) -> None:
    path = tmp_path / "deck.json"
    path.write_text(json.dumps(_inline_deck()))
    for deck, field in ((DEFAULT_DECK, "deck_name"), (_inline_deck(), "deck_json"), (str(path), "deck_json")):
        game: Junior[Any] = make_variant("junior-advanced", {"players": 2, "deck": deck})  # type: ignore[assignment]
        view = _first_request(game, 3)
        message, back = _request_trip("junior-advanced", view)
        assert message.junior.WhichOneof("deck") == field
        assert back == view and back.deck == game.deck
        if field == "deck_json":
            assert back.deck.name == "my printed deck" and back.deck.source is None


@pytest.mark.parametrize(
    ("deck", "problem"),
    [
        ({"deck_name": "../junior_deck.json"}, "path"),
        ({"deck_name": "no_such_deck.json"}, "deck"),
        ({"deck_json": "{not json"}, "not JSON"),
        ({"deck_json": '"junior_deck.json"'}, "no deck"),
        ({"deck_json": '{"cows": []}'}, "does not load"),
        ({}, "no deck"),
    ],
)
def test_a_view_with_a_bad_deck_is_a_wire_error(deck: dict[str, str], problem: str) -> None:
    game: Junior[Any] = make_variant("junior-basic", {"players": 2})  # type: ignore[assignment]
    message, _ = _request_trip("junior-basic", _first_request(game, 1))
    message.junior.ClearField("deck")
    for field, value in deck.items():
        setattr(message.junior, field, value)
    with pytest.raises(wire.WireError, match=problem):
        wire.view_from_wire(message)


def test_every_junior_variant_has_a_codec_and_unknown_events_are_refused() -> None:
    for name in ("junior-basic", "junior-advanced", "junior-experts"):
        assert wire.codec(name).variant == name
        assert wire.codec(name).view_field == "junior"
    assert wire.codec("classic").view_field == "classic"  # each game its own field
    with pytest.raises(wire.WireError):
        wire.codec("junior-basic").event_to_wire(object(), game_pb2.MatchEvent())  # type: ignore[arg-type]
    empty = game_pb2.MatchEvent()
    empty.junior.SetInParent()
    with pytest.raises(wire.WireError):
        wire.event_from_wire(empty)


# -- real processes --------------------------------------------------------------------------

REMOTE: list[tuple[str, dict[str, Any]]] = [
    ("junior-basic", {"players": 3}),
    ("junior-advanced", {"players": 3, "nuisance": True}),
    ("junior-experts", {"players": 3, "deck": _inline_deck()}),
]


@pytest.mark.parametrize(("name", "config"), REMOTE)
def test_bots_as_processes_finish_junior_games_without_faults(name: str, config: dict[str, Any]) -> None:
    plans = [MatchPlan(("a", "b", "c"), 21), MatchPlan(("c", "a", "b"), 22)]
    run = play_matches({"a": "random", "b": "heuristic", "c": "random"}, plans, variant=name, config=config)
    assert run.exit_codes == {"a": 0, "b": 0, "c": 0}
    assert len(run.matches) == 2
    for match, plan in zip(run.matches, plans, strict=True):
        assert match.status == "finished" and not match.error
        assert [s.entrant for s in match.seats] == list(plan.entrants)
        for seat in match.seats:
            assert seat.faults == {} and seat.defaulted == 0 and not seat.forfeited
        transcript = Transcript.from_json(match.transcript)
        assert transcript.variant == name and transcript.seed == plan.seed
        assert match.digest == transcript.digest()
        outcome = verify(transcript)
        assert list(outcome.scores) == [s.score for s in match.seats]
        assert list(outcome.ranks) == [s.rank for s in match.seats]
        assert sum(s.decisions for s in match.seats) > 0


@pytest.mark.parametrize(("name", "config"), REMOTE)
def test_remote_junior_play_is_the_same_game_as_in_process_play(name: str, config: dict[str, Any]) -> None:
    kwargs: dict[str, Any] = {"variant": name, "config": config, "table_size": 3, "deals": 1, "seed": 6}
    bots = ["random", "heuristic", "random"]
    local_table, local = run_tournament(bots, **kwargs)
    remote_table, remote = run_tournament(bots, remote=True, **kwargs)
    assert [r.digest for r in remote] == [r.digest for r in local]
    assert [(s.name, s.mean_score) for s in remote_table] == [(s.name, s.mean_score) for s in local_table]
    assert all(f == 0 for r in remote for f in r.faults)
