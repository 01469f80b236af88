"""Opt-in parts of Hello: public events only to the bots that take them, a step's table once.

``Hello.events`` unset (a bot written before the field) gets every event as before; ``true`` gets
every event too; ``false`` gets none. The SDK asks for events only when the bot's class overrides
``on_events``. With ``Hello.table_once`` a step's table travels once per Update: the requests of
the other seats of the connection name the one that holds it, and every seat still sees its own
whole view.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from refkit import ONE_HAND, TWO_HANDS, Processes, read_log, transcript_of

from arena.matches import FinishedMatch, MatchPlan, RefereeClient, play_matches
from arena.tournament import LOCAL_SEAT_KEY
from bot_sdk.bot import Bot
from bot_sdk.play import play_match
from bot_sdk.runner import takes_events
from games.classic.bots import HeuristicBot, RandomBot
from referee import wire
from referee.rules.chance import SeededChance
from referee.rules.core import CHANCE
from referee.rules.registry import make_variant
from referee.rules.transcript import replay_states
from sixnimmt.v1 import game_pb2, referee_pb2


def _updates(path: Path) -> list[referee_pb2.Update]:
    return [m.update for m in read_log(path) if m.WhichOneof("kind") == "update"]


def test_events_go_to_subscribers_and_old_hellos_only(
    referee: RefereeClient, bots: Processes, tmp_path: Path
) -> None:
    plans = [MatchPlan(("old", "sub", "off", "sdk"), seed) for seed in (1, 2)]
    ids, tokens = referee.create_matches("classic", TWO_HANDS, plans)
    logs = {name: tmp_path / f"{name}.log" for name in ("old", "sub", "off")}
    bots.raw("old", "first", tokens["old"], "--log", str(logs["old"]))
    bots.raw("sub", "first", tokens["sub"], "--log", str(logs["sub"]), "--events", "on")
    bots.raw("off", "first", tokens["off"], "--log", str(logs["off"]), "--events", "off")
    bots.sdk("sdk", ":Highest", tokens["sdk"])  # no on_events of its own: the SDK opts out
    matches = [referee.result(match_id, timeout=60) for match_id in ids]
    for name in ("old", "sub", "off"):
        assert bots.wait(name) == 0
    assert bots.wait("sdk") == 0
    assert all(m.status == "finished" and not any(s.faults for s in m.seats) for m in matches)
    for name in ("old", "sub"):
        got: dict[str, list[object]] = {match_id: [] for match_id in ids}
        for update in _updates(logs[name]):
            for message in update.events:
                got[message.match_id].append((message.step, wire.event_from_wire(message)))
        for match_id, match in zip(ids, matches, strict=True):
            _, _, events = replay_states(transcript_of(match))
            expected = [(step, event) for step, step_events in enumerate(events, 1) for event in step_events]
            assert got[match_id] == expected, name  # every event of the match, in order
    off = _updates(logs["off"])
    assert not any(update.events for update in off)
    assert sum(len(update.requests) for update in off) >= 2 * 2 * 10  # it still played every turn
    assert sorted(over.match_id for update in off for over in update.overs) == sorted(ids)


def test_sdk_bot_that_overrides_on_events_gets_them(
    referee: RefereeClient, bots: Processes, tmp_path: Path
) -> None:
    counts = tmp_path / "events.txt"
    ids, tokens = referee.create_matches("classic", ONE_HAND, [MatchPlan(("w", "x", "y", "z"), 3)])
    bots.sdk("w", ":Watcher", tokens["w"], BOT_EVENTS=str(counts))
    for name in "xyz":
        bots.sdk(name, "random", tokens[name])
    match = referee.result(ids[0], timeout=60)
    assert bots.wait("w") == 0
    _, _, events = replay_states(transcript_of(match))
    assert counts.read_text().split() == [str(sum(len(step) for step in events))]


class _Tracks(RandomBot):
    def on_events(self, events: object) -> None:
        pass


def test_the_sdk_subscribes_only_when_the_class_overrides_on_events() -> None:
    assert not takes_events(RandomBot)
    assert not takes_events(HeuristicBot)
    assert takes_events(_Tracks)
    assert takes_events(lambda: RandomBot())  # not a class: events as every bot had them before
    assert takes_events(RandomBot, "all") and not takes_events(_Tracks, "none")
    assert Bot.on_events is RandomBot.on_events


# -- the table once per step -------------------------------------------------------------------


def _expected_views(match: FinishedMatch, seat: int) -> list[object]:
    """The views ``seat`` was asked with, in order, from the match's transcript."""
    variant, states, _ = replay_states(transcript_of(match))
    asked = [state for state in states if any(d.seat == seat for d in variant.pending(state))]
    return [variant.view(state, seat) for state in asked]


def test_table_once_sends_the_table_once_and_every_seat_sees_its_view(
    referee: RefereeClient, bots: Processes, tmp_path: Path
) -> None:
    log = tmp_path / "t.log"
    plans = [MatchPlan(("t", "u", "t", "u"), seed) for seed in (5, 6)]
    ids, tokens = referee.create_matches("classic", TWO_HANDS, plans)
    bots.raw("t", "first", tokens["t"], "--log", str(log), "--table-once")
    bots.sdk("u", "heuristic", tokens["u"])
    matches = {match_id: referee.result(match_id, timeout=60) for match_id in ids}
    assert bots.wait("t") == 0
    seen: dict[tuple[str, int], list[object]] = {}
    shared = 0
    for update in _updates(log):
        first: dict[str, int] = {}
        for request in update.requests:
            if request.match_id in first:
                assert request.table_from == first[request.match_id]
                assert not request.classic.rows and not request.classic.scores  # the table left out
                assert request.classic.hand  # its own part is there
                shared += 1
            else:
                first[request.match_id] = request.id
                assert request.table_from == 0 and len(request.classic.rows) == 4
        views = wire.UpdateViews(update.requests)
        for request in update.requests:
            seen.setdefault((request.match_id, request.seat), []).append(views.view(request))
    assert shared >= 2 * 2 * 10  # the second seat's card decisions of every turn of both matches
    for match_id, match in matches.items():
        for seat in (0, 2):
            assert seen[(match_id, seat)] == _expected_views(match, seat)


def test_sdk_bots_with_two_seats_play_the_in_process_games(referee: RefereeClient) -> None:
    """The SDK asks for table_once; heuristic bots, which read the rows, play exactly as in-process."""
    config = {**TWO_HANDS, "players": 4}
    plans = [MatchPlan(("a", "b", "a", "b"), seed) for seed in (11, 12)]
    run = play_matches(
        {"a": "heuristic", "b": "heuristic"}, plans, config=config, client=referee, seat_key=LOCAL_SEAT_KEY
    )
    variant = make_variant("classic", config)
    for plan, match in zip(plans, run.matches, strict=True):
        local = play_match(variant, [HeuristicBot] * 4, plan.seed, seat_key=LOCAL_SEAT_KEY)
        assert match.digest == local.transcript.digest()


@pytest.mark.parametrize(
    ("variant", "config"),
    [
        ("classic", {"players": 5, "hands": 2, "target": None}),
        ("board", {"players": 4, "pro": True, "luck": True}),
        ("anniversary", {"players": 4}),
        ("junior-experts", {"players": 3}),
    ],
)
def test_table_once_views_equal_whole_views(variant: str, config: dict[str, object]) -> None:
    """On random games of each game, a step's requests written table-once read back as the views."""
    game = make_variant(variant, config)
    rng = random.Random(7)
    state = game.initial_state()
    chance = SeededChance(3)
    steps = 0
    while pending := game.pending(state):
        if pending[0].seat == CHANCE:
            state, _ = game.apply(state, {CHANCE: game.sample_chance(state, chance)})
            continue
        update = referee_pb2.Update()
        for number, decision in enumerate(pending, 1):
            wire.request_to_wire(
                number, "m", variant, decision, game.view(state, decision.seat), 100, 100,
                update.requests.add(), table_from=1 if number > 1 else 0,
            )  # fmt: skip
        parsed = referee_pb2.Update.FromString(update.SerializeToString())
        views = wire.UpdateViews(parsed.requests)
        for request, decision in zip(parsed.requests, pending, strict=True):
            assert views.view(request) == game.view(state, decision.seat)
            if request.id > 1 and wire.codec(variant).view_to_wire_own is not None:
                assert request.table_from == 1
                whole = game_pb2.DecisionRequest()
                view = game.view(state, decision.seat)
                wire.request_to_wire(1, "m", variant, decision, view, 100, 100, whole)
                assert request.ByteSize() < whole.ByteSize()
        state, _ = game.apply(state, {d.seat: rng.choice(d.options) for d in pending})
        steps += 1
    assert steps > 5
