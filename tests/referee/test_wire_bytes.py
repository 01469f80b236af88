"""The referee's Updates assembled as bytes (``referee.wire.request_bytes``, ``events_bytes``,
``update_bytes``) against the messages the codec writes, serialized by protobuf: the same bytes for
every request, with and without its table, and every event of the golden games of every variant;
the edges of the varint encoding; and the server's Connection against the messages it used to
buffer."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest
from wire_golden import GAMES, Game

from referee import wire
from referee.driver.links import GameInfo, Request, Step
from referee.faults import FaultKind, FaultNotice
from referee.rules import CHANCE, Decision, DecisionKind, Outcome, SeededChance, Termination
from referee.server.connection import Connection
from sixnimmt.v1 import game_pb2, referee_pb2


def _steps(game: Game) -> Any:
    """Each step of a golden game: its pending seats with their views, and its events."""
    variant = game.build()
    rng, chance = random.Random(game.seed), SeededChance(game.seed)
    state = variant.initial_state()
    while pending := variant.pending(state):
        if pending[0].seat == CHANCE:
            asked = []
            actions = {CHANCE: variant.sample_chance(state, chance)}
        else:
            asked = [(decision, variant.view(state, decision.seat)) for decision in pending]
            actions = {decision.seat: rng.choice(decision.options) for decision in pending}
        state, events = variant.apply(state, actions)
        yield variant.name, asked, events


def _request(*args: Any, table_from: int = 0) -> bytes:
    out = game_pb2.DecisionRequest()
    wire.request_to_wire(*args, out, table_from)
    return out.SerializeToString()


@pytest.mark.parametrize("game", GAMES, ids=lambda game: game.name)
def test_requests_and_events_as_bytes_are_the_messages_bytes(game: Game) -> None:
    request_id = 0
    checked = 0
    for step, (variant, asked, events) in enumerate(_steps(game), 1):
        first = 0
        for decision, view in asked:
            # Ids and banks across their encodings' sizes (one, two and more bytes; a spent bank).
            request_id += 1 + 200 * (request_id % 3)
            bank = (0, 10_000, 7, 2**31 - 1)[request_id % 4]
            args = (request_id, f"m-{step % 7}", variant, decision, view, 2000, bank)
            assert wire.request_bytes(*args) == _request(*args), (game.name, step, decision)
            # Hello.table_once: the step's first request holds the table, the others name it.
            assert wire.request_bytes(*args, table_from=first) == _request(*args, table_from=first)
            first = first or request_id
            checked += 1
        sent: list[game_pb2.MatchEvent] = []
        wire.events_to_wire(variant, "m1", step, events, sent)
        assert wire.events_bytes(variant, "m1", step, events) == [m.SerializeToString() for m in sent]
    assert checked > 0


def test_a_codec_that_cannot_encode_its_view_by_hand_still_sends_the_same_bytes() -> None:
    """A game without ``view_bytes`` (a plugin's, say) gets its requests built as messages."""
    game = GAMES[0]
    variant, asked, _ = next(step for step in _steps(game) if step[1])
    decision, view = asked[0]
    real = wire.codec(variant)
    twin = real.named(variant)
    twin.view_bytes = None
    wire.CODECS[variant] = twin
    try:
        args = (5, "m", variant, decision, view, 2000, 10_000)
        assert wire.request_bytes(*args) == _request(*args)
    finally:
        wire.CODECS[variant] = real


@pytest.mark.parametrize(
    "values", [(), (0,), (1, 127), (128, 300, 16383, 16384), (-1,), (-(2**31), 2**31 - 1)]
)
def test_packed_values_and_varints_are_protobufs(values: tuple[int, ...]) -> None:
    message = game_pb2.IntTuple(values=values)
    expected = message.SerializeToString()
    body = wire.packed(values)
    assert (b"\x0a" + wire.varint(len(body)) + body if values else b"") == expected


def test_an_update_as_bytes_is_the_update_message() -> None:
    starts = [referee_pb2.GameStart(match_id="m", seat=1, variant="classic", seat_seed=2**64 - 1)]
    events = [game_pb2.MatchEvent(match_id="m", step=300)]
    decision = Decision(0, DecisionKind.CARD, (1, 2))
    requests = [game_pb2.DecisionRequest(id=2**40, match_id="é", options=decision.options)] * 3
    overs = [referee_pb2.GameOver(match_id="m", scores=[3, 0], ranks=[2, 1], termination="target")]
    faults = [referee_pb2.FaultNotice(match_id="", seat=-1, request_id=9, reason="x" * 300)]
    message = referee_pb2.RefereeMessage()
    for field, items in zip(
        ("starts", "events", "requests", "overs", "faults"),
        (starts, events, requests, overs, faults),
        strict=True,
    ):
        getattr(message.update, field).extend(items)
    as_bytes = wire.update_bytes(*([m.SerializeToString() for m in items]  # type: ignore[attr-defined]
                                   for items in (starts, events, requests, overs, faults)))  # fmt: skip
    assert as_bytes == message.SerializeToString()
    empty = referee_pb2.RefereeMessage()
    empty.update.SetInParent()
    assert wire.update_bytes([], [], [], [], []) == empty.SerializeToString()


@pytest.mark.parametrize("table_once", [False, True])
def test_a_connection_sends_the_update_it_used_to_build_as_a_message(table_once: bool) -> None:
    """What a Connection buffers comes out as the bytes of the message the codec writes for it."""
    loop = asyncio.new_event_loop()
    try:
        game = GAMES[0]
        variant, asked, events = next(step for step in _steps(game) if len(step[1]) > 1)
        info = GameInfo("m-1", 2, variant, {"players": 4}, 2**63 + 5, ("a", "b", "c", "d"))
        connection = Connection(table_once=table_once)
        connection.push_start(info)
        step = Step(lambda: None, loop)
        requests = [
            Request(7 + seat, "m-1", seat, decision, view, 2000, 9_000, step)
            for seat, (decision, view) in enumerate(asked)
        ]
        for request in requests:
            connection.push_request(request)
        connection.push_events("m-1", 3, events)
        outcome = Outcome((3, 0), (2, 1), Termination.TARGET_REACHED)
        connection.push_over("m-1", 2, outcome)
        notice = FaultNotice(FaultKind.TIMEOUT, "m-1", 2, 8, "too slow")
        connection.push_fault(notice)
        taken = connection.take()
        assert connection.take() is None  # nothing since

        expected = referee_pb2.RefereeMessage()
        update = expected.update
        wire.start_to_wire(
            "m-1", 2, variant, {"players": 4}, 2**63 + 5, ("a", "b", "c", "d"), update.starts.add()
        )
        for request in requests:
            first = requests[0].id if table_once and request is not requests[0] else 0
            wire.request_to_wire(request.id, "m-1", variant, request.decision, request.view, 2000, 9_000,
                                 update.requests.add(), first)  # fmt: skip
        wire.events_to_wire(variant, "m-1", 3, events, update.events)
        wire.over_to_wire("m-1", 2, outcome, update.overs.add())
        wire.fault_notice_to_wire(notice, update.faults.add())
        assert taken == expected.SerializeToString()
        assert referee_pb2.RefereeMessage.FromString(taken) == expected
    finally:
        loop.close()
