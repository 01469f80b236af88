"""The board game over the wire: every view and event round-trips; real processes play it."""

from __future__ import annotations

import json
import random
from collections import Counter
from dataclasses import replace

import pytest

from arena.matches import MatchPlan, local_referee, play_matches
from arena.tournament import run_tournament
from games.board.rules.board import Board, Tiles
from games.board.rules.brettspiel import Brettspiel, BrettspielConfig, BrettspielState, BrettspielView
from referee import wire
from referee.rules.chance import SeededChance
from referee.rules.core import CHANCE, Decision, DecisionKind
from referee.rules.transcript import Transcript, replay, verify
from sixnimmt.v1 import game_pb2, referee_pb2

EVENT_TYPES = {
    "TilesDealt", "TilesRevealed", "LuckCardPlayed", "TileAttached", "RowTaken", "PointsScored",
    "LuckCardTaken", "GameEnded",
}  # fmt: skip
PRO_EVENT_TYPES = {
    "RowOpened", "RowShifted", "ActionCardsDealt", "ActionCardPlayed", "StopSignsRemoved", "TileDrawn",
    "ActionCardDrawn", "ActionCardsReshuffled",
}  # fmt: skip
VERSIONS = {
    "basic": {},
    "luck": {"luck": True},
    "pro": {"pro": True},
    "pro-luck": {"pro": True, "luck": True},
}
"""The four versions of the board game, as config options."""
SCARCE_ACTION_CARDS = {
    "action_cards_each": 1, "stop_cards": 2, "tile_swap_cards": 1, "skip_cards": 1, "move_to_front_cards": 1,
    "attach_ascending_cards": 1, "one_more_tile_cards": 1,
}  # fmt: skip
"""A deck small enough to run out, so that the discard pile is reshuffled."""


def dealt(game: Brettspiel, seed: int) -> BrettspielState:
    """The state after the first deal."""
    start = game.initial_state()
    return game.apply(start, {CHANCE: game.sample_chance(start, SeededChance(seed))})[0]


def through_the_wire_view(view: BrettspielView, decision: Decision) -> tuple[BrettspielView, Decision]:
    """A view as the referee sends it, through bytes, as the SDK reads it."""
    out = game_pb2.DecisionRequest()
    wire.request_to_wire(7, "m1", "board", decision, view, 2000, 10_000, out)
    message = game_pb2.DecisionRequest.FromString(out.SerializeToString())
    assert message.WhichOneof("view") == "board"
    back = wire.view_from_wire(message)
    assert isinstance(back, BrettspielView)
    return back, wire.decision_from_wire(message)


def play_through_the_wire(game: Brettspiel, seed: int, seen: Counter[str]) -> None:
    """Play a random game; every view asked for and every event must come back equal."""
    rng = random.Random(seed)
    chance = SeededChance(seed)
    state = game.initial_state()
    step = 0
    while pending := game.pending(state):
        if pending[0].seat == CHANCE:
            actions = {CHANCE: game.sample_chance(state, chance)}
        else:
            actions = {}
            for decision in pending:
                view = game.view(state, decision.seat)
                back, decision_back = through_the_wire_view(view, decision)
                assert back == view
                assert decision_back == decision
                seen[f"view:{view.phase}"] += 1
                seen[f"kind:{decision.kind.value}"] += 1
                seen["attaching"] += view.attaching is not None
                actions[decision.seat] = rng.choice(decision.options)
        state, events = game.apply(state, actions)
        step += 1
        out = referee_pb2.Update().events
        wire.events_to_wire("board", "m1", step, events, out)
        assert len(out) == len(events)
        for event, message in zip(events, out, strict=True):
            parsed = game_pb2.MatchEvent.FromString(message.SerializeToString())
            assert (parsed.match_id, parsed.step, parsed.WhichOneof("payload")) == ("m1", step, "board")
            back_event = wire.event_from_wire(parsed)
            assert type(back_event) is type(event)
            assert back_event == event
            seen[type(event).__name__] += 1


@pytest.mark.parametrize("version", list(VERSIONS))
def test_every_view_and_event_of_random_games_round_trips(version: str) -> None:
    options = VERSIONS[version]
    luck, pro = bool(options.get("luck")), bool(options.get("pro"))
    seen: Counter[str] = Counter()
    for seed in range(12):
        players = 2 + seed % 5
        config = BrettspielConfig(players=players, **options)
        if luck and seed % 3 == 0:
            config = replace(config, plus_points_cards=1, positive_oxen_cards=2)
        if pro and seed % 4 == 1:
            config = replace(config, **SCARCE_ACTION_CARDS)
        play_through_the_wire(Brettspiel(config), seed, seen)
    expected = {"view:play", "kind:card", "kind:cards"} | EVENT_TYPES
    if luck:
        expected |= {"view:luck", "view:pile", "kind:luck", "kind:pile", "attaching"}
    else:
        expected -= {"LuckCardPlayed", "LuckCardTaken"}
        assert not {"view:luck", "view:pile", "LuckCardPlayed", "LuckCardTaken"} & set(seen)
    if pro:
        expected |= {"view:action", "view:row", "kind:action_card", "kind:row", "attaching"} | PRO_EVENT_TYPES
    else:
        assert not {"view:action", "view:row", *PRO_EVENT_TYPES} & set(seen)
    assert expected <= set(seen), expected - set(seen)


def test_a_board_and_tiles_of_the_users_own_travel_as_data() -> None:
    """A layout that is not a packaged one goes as JSON, with its source; the oxen always go along."""
    board = Board.parse([". G . T", ". D D . T", ". R . T", ". +3 . T", ". RR . T", ". . T"])
    tiles = Tiles.from_oxen({7: 4, 50: 3}, 80)
    game = Brettspiel(BrettspielConfig(players=3, luck=True, tiles_each=8), board=board, tiles=tiles)
    state = dealt(game, 3)
    decision = game.pending(state)[0]
    view = game.view(state, decision.seat)
    out = game_pb2.DecisionRequest()
    wire.request_to_wire(1, "m", "board", decision, view, 100, 100, out)
    assert out.board.WhichOneof("layout") == "board_json" and out.board.board_source == "<test board>"
    back = wire.view_from_wire(game_pb2.DecisionRequest.FromString(out.SerializeToString()))
    assert back == view and back.board == board and back.oxen == tiles.oxen
    play_through_the_wire(game, 5, Counter())


def test_the_packaged_board_travels_by_name() -> None:
    game = Brettspiel(BrettspielConfig(players=4))
    state = dealt(game, 1)
    out = game_pb2.DecisionRequest()
    wire.request_to_wire(1, "m", "board", game.pending(state)[0], game.view(state, 0), 100, 100, out)
    assert out.board.board_name == "blue" and not out.board.board_json
    assert list(out.board.oxen) == list(game.tiles.oxen)


def test_a_view_naming_a_layout_by_path_or_none_is_refused() -> None:
    game = Brettspiel(BrettspielConfig(players=2))
    state = dealt(game, 1)
    out = game_pb2.DecisionRequest()
    wire.request_to_wire(1, "m", "board", game.pending(state)[0], game.view(state, 0), 100, 100, out)
    out.board.board_name = "/etc/board.json"
    with pytest.raises(wire.WireError, match="by a path"):
        wire.view_from_wire(out)
    out.board.board_name = "no-such-board"
    with pytest.raises(wire.WireError, match="does not load"):
        wire.view_from_wire(out)
    out.board.ClearField("board_name")
    with pytest.raises(wire.WireError, match="names no layout"):
        wire.view_from_wire(out)


def test_luck_actions_and_the_pile_kind_cross_the_wire() -> None:
    for action in ((), (1,), (2, 17, 83), 2, (4, 9)):
        out = game_pb2.Action()
        wire.action_to_wire(action, out)
        assert wire.action_from_wire(game_pb2.Action.FromString(out.SerializeToString())) == action
    assert wire.KIND_FROM_WIRE[wire.KIND_TO_WIRE[DecisionKind.PILE]] is DecisionKind.PILE
    assert set(wire.KIND_TO_WIRE) == set(DecisionKind) - {DecisionKind.CHANCE}


# -- real processes --------------------------------------------------------------------------


@pytest.mark.parametrize("version", ["basic", "luck", "pro-luck"])
def test_bots_as_processes_play_the_board_game_under_the_referee(version: str) -> None:
    options = VERSIONS[version]
    specs = {"random": "random", "heuristic": "heuristic"}
    plans = [
        MatchPlan(("random", "heuristic"), 11),
        MatchPlan(("heuristic", "random", "heuristic"), 12),
        MatchPlan(("random", "heuristic", "random", "heuristic"), 13),
        MatchPlan(("heuristic", "random", "heuristic", "random", "heuristic", "random"), 14),
    ]
    happened: set[str] = set()
    with local_referee() as client:
        for plan in plans:
            config = {"players": len(plan.entrants), **options}
            run = play_matches(specs, [plan], variant="board", config=config, client=client)
            assert run.exit_codes == {"random": 0, "heuristic": 0}
            (match,) = run.matches
            assert match.status == "finished", match.error
            assert all(s.faults == {} and s.defaulted == 0 and not s.forfeited for s in match.seats)
            assert all(s.decisions > 0 for s in match.seats)
            transcript = Transcript.from_json(json.loads(json.dumps(match.transcript)))
            outcome = verify(transcript)
            assert transcript.digest() == match.digest
            assert transcript.variant == "board"
            assert all(transcript.config[k] == v for k, v in options.items())
            assert tuple(s.score for s in sorted(match.seats, key=lambda s: s.seat)) == outcome.scores
            happened.update(type(e).__name__ for step in replay(transcript)[1] for e in step)
    # With luck, the bots were asked for luck cards and piles over the wire, and used them; in
    # the pro version, action cards and rows.
    assert ({"LuckCardPlayed", "LuckCardTaken"} <= happened) is bool(options.get("luck"))
    assert ({"ActionCardPlayed", "RowOpened"} <= happened) is bool(options.get("pro"))


@pytest.mark.parametrize("version", list(VERSIONS))
def test_remote_board_games_are_the_in_process_games(version: str) -> None:
    kwargs = {"variant": "board", "config": VERSIONS[version], "table_size": 3, "deals": 1, "seed": 5}
    bots = ["random", "heuristic", "random"]
    local_table, local = run_tournament(bots, **kwargs)
    remote_table, remote = run_tournament(bots, remote=True, **kwargs)
    assert [r.digest for r in remote] == [r.digest for r in local]
    assert [(s.name, s.mean_score) for s in remote_table] == [(s.name, s.mean_score) for s in local_table]
    assert all(f == 0 for r in remote for f in r.faults)
