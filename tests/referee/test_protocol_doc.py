"""docs/protocol.md holds: its examples parse against the .proto, its claims hold on a real referee.

Every fenced block whose info string is ``textproto MESSAGE`` or ``json MESSAGE`` is parsed as that
message of ``sixnimmt.v1`` (text format, or proto3 JSON), unknown fields refused. Classic's table of
``config_json`` keys is the engine's config. The claims a bot author relies on (status codes for a
bad Hello, the order of events in a turn, how turns and scores count, single-option decisions,
tokens after their games) are checked against a referee process, with a bot that uses nothing but
the generated stubs.
"""

from __future__ import annotations

import dataclasses
import json
import queue
import re
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
from google.protobuf import json_format, text_format

from arena.matches import MatchPlan, RefereeClient, local_referee, spawn_bot
from games.classic.rules.classic import Classic
from sixnimmt.v1 import game_pb2, referee_pb2, referee_pb2_grpc

DOC = Path(__file__).resolve().parents[2] / "docs" / "protocol.md"
BLOCK = re.compile(r"^```(textproto|json) (sixnimmt\.v1\.\w+)\n(.*?)^```$", re.S | re.M)
MESSAGES = {**game_pb2.__dict__, **referee_pb2.__dict__}


def examples() -> list[tuple[str, str, str]]:
    return [(kind, name, body) for kind, name, body in BLOCK.findall(DOC.read_text())]


def test_the_doc_has_examples_of_the_conversation() -> None:
    names = {name for _, name, _ in examples()}
    assert {"sixnimmt.v1.BotMessage", "sixnimmt.v1.RefereeMessage", "sixnimmt.v1.DecisionRequest"} <= names
    assert {"sixnimmt.v1.CreateMatchesRequest"} <= names and len(examples()) >= 8


@pytest.mark.parametrize(("kind", "name", "body"), examples(), ids=lambda x: str(x)[:40])
def test_every_documented_message_parses_against_the_proto(kind: str, name: str, body: str) -> None:
    message = MESSAGES[name.removeprefix("sixnimmt.v1.")]()
    # "…" abbreviates a token in the doc; a string may hold it, a number may not.
    if kind == "textproto":
        text_format.Parse(body, message)  # unknown fields and bad values raise
    else:
        json_format.Parse(body, message)
    assert message.ByteSize() > 0
    for field in ("config_json",):  # config JSON inside a message is JSON too
        for found in _strings(message, field):
            json.loads(found)


def test_a_wrong_example_would_fail() -> None:
    with pytest.raises(text_format.ParseError):
        text_format.Parse("hello { tokn: 'x' }", referee_pb2.BotMessage())
    with pytest.raises(json_format.ParseError):
        json_format.Parse('{"id": "1", "optionz": [1]}', game_pb2.DecisionRequest())


def _strings(message: Any, name: str) -> Iterator[str]:
    for field, value in message.ListFields():
        if field.name == name:
            yield value
        elif field.message_type is not None:
            for item in [value] if hasattr(value, "ListFields") else list(value):
                if hasattr(item, "ListFields"):
                    yield from _strings(item, name)


def test_the_classic_config_table_is_the_engines_config() -> None:
    text = DOC.read_text()
    table = text[text.index("| key | default | bounds | meaning |") :].split("\n\n")[0]
    rows = [line.split("|")[1:4] for line in table.splitlines()[2:]]
    documented = {key.strip().strip("`"): default.strip().strip("`") for key, default, _ in rows}
    config = Classic.config_type()
    fields = {f.name: getattr(config, f.name) for f in dataclasses.fields(config)}
    assert set(documented) == set(fields)
    for key, default in fields.items():
        assert documented[key] == json.dumps(default), key


# -- the claims, on a referee process ------------------------------------------------------------


@pytest.fixture(scope="module")
def referee() -> Iterator[RefereeClient]:
    with local_referee(env={"SIXNIMMT_HELLO_MS": "2000"}) as client:
        yield client


def first_reply(address: str, *messages: referee_pb2.BotMessage) -> tuple[grpc.StatusCode | None, Any]:
    """Send ``messages`` and end the stream; the status the call ended with and the first message."""
    with grpc.insecure_channel(address) as channel:
        stream = referee_pb2_grpc.RefereeStub(channel).Play(iter(messages), timeout=20)
        try:
            return None, next(stream)
        except grpc.RpcError as exc:
            return exc.code(), exc.details()


def hello(token: str, protocol: int = 1) -> referee_pb2.BotMessage:
    return referee_pb2.BotMessage(hello=referee_pb2.Hello(token=token, name="doc", protocol=protocol))


def test_a_bad_first_message_ends_the_call_with_the_documented_status(referee: RefereeClient) -> None:
    _, tokens = referee.create_matches("classic", {"players": 2, "hands": 1}, [MatchPlan(("a", "b"), 1)])
    address, token = referee.address, tokens["a"]
    code, said = first_reply(address, hello(token, protocol=0))
    assert (
        code == grpc.StatusCode.FAILED_PRECONDITION
        and "0 (not set)" in said
        and "set Hello.protocol = 1" in said
    )
    code, said = first_reply(address, hello(token, protocol=2))
    assert code == grpc.StatusCode.FAILED_PRECONDITION and "Hello.protocol 2" in said
    decisions = referee_pb2.BotMessage(decisions=referee_pb2.DecisionBatch())
    assert first_reply(address, decisions)[0] == grpc.StatusCode.INVALID_ARGUMENT
    assert first_reply(address)[0] == grpc.StatusCode.DEADLINE_EXCEEDED  # the stream ended first
    assert first_reply(address, hello("no-such-token"))[0] == grpc.StatusCode.UNAUTHENTICATED
    code, welcome = first_reply(address, hello(token))  # protocol 1: welcomed (then it leaves)
    assert code is None and welcome.WhichOneof("kind") == "welcome" and welcome.welcome.protocol == 1


class RawBot:
    """A bot of generated stubs only, recording every message; plays the lowest option."""

    def __init__(self, address: str, token: str) -> None:
        self.received: list[referee_pb2.RefereeMessage] = []
        self.outgoing: queue.SimpleQueue[referee_pb2.BotMessage | None] = queue.SimpleQueue()
        self.outgoing.put(hello(token))
        self.channel = grpc.insecure_channel(address)
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        for message in referee_pb2_grpc.RefereeStub(self.channel).Play(iter(self.outgoing.get, None)):
            self.received.append(message)
            if message.WhichOneof("kind") == "update" and message.update.requests:
                batch = referee_pb2.BotMessage()
                for request in message.update.requests:
                    batch.decisions.replies.add(id=request.id).action.number = min(request.options)
                self.outgoing.put(batch)
            elif message.WhichOneof("kind") == "goodbye":
                break
        self.outgoing.put(None)

    def join(self) -> None:
        self.thread.join(120)
        self.channel.close()


def test_a_classic_game_on_the_wire_is_as_the_doc_says(referee: RefereeClient) -> None:
    """Turns, scores, event order, single-option requests, row indices, uint64 ids, the token after."""
    config = {"players": 3, "hands": 2, "target": None, "hand_size": 6}
    (match_id,), tokens = referee.create_matches("classic", config, [MatchPlan(("raw", "r1", "r2"), 1)])
    others = [
        spawn_bot("lowest", referee=referee.address, token=tokens[n], variant="classic", name=n)
        for n in ("r1", "r2")
    ]
    bot = RawBot(referee.address, tokens["raw"])
    bot.join()
    for process in others:
        assert process.wait(60) == 0
    assert referee.result(match_id).status == "finished"
    updates = [m.update for m in bot.received if m.WhichOneof("kind") == "update"]
    starts = [s for u in updates for s in u.starts]
    defaults = dataclasses.asdict(Classic.config_type())
    assert len(starts) == 1 and json.loads(starts[0].config_json) == {**defaults, **config}
    events = [(e.step, getattr(e.classic, e.classic.WhichOneof("event")), e.classic.WhichOneof("event"))
              for u in updates for e in u.events]  # fmt: skip
    requests = [r for u in updates for r in u.requests]
    # Ids: uint64, growing, answered as received.
    assert [r.id for r in requests] == sorted(r.id for r in requests)
    cards = [r for r in requests if r.kind == game_pb2.DECISION_KIND_CARD]
    rows = [r for r in requests if r.kind == game_pb2.DECISION_KIND_ROW]
    # Every card decision is asked, the last of each hand with its one option.
    assert len(cards) == 2 * 6
    assert [len(r.options) for r in cards] == [6, 5, 4, 3, 2, 1] * 2
    assert [r.classic.turn for r in cards] == [0, 1, 2, 3, 4, 5] * 2  # turns completed
    assert [r.classic.hand_no for r in cards] == [1] * 6 + [2] * 6
    assert rows, "no low card in this game: pick another seed"
    for r in rows:
        assert list(r.options) == [0, 1, 2, 3] and r.classic.phase == "row" and r.classic.revealed
    # CardsRevealed.turn counts from 1; a turn's events: revealed, then (RowChosen, CardPlaced),
    # then the other cards placed ascending.
    kinds = [kind for _, _, kind in events]
    assert "row_chosen" in kinds
    revealed = [e for _, e, kind in events if kind == "cards_revealed"]
    assert [e.turn for e in revealed] == [1, 2, 3, 4, 5, 6] * 2
    for at, kind in enumerate(kinds):
        if kind == "row_chosen":
            chosen, placed = events[at][1], events[at + 1][1]
            assert kinds[at + 1] == "card_placed" and (placed.card, placed.row) == (chosen.card, chosen.row)
    for at, kind in enumerate(kinds):
        if kind == "cards_revealed":
            turn = []
            for later in kinds[at + 1 :]:
                if later not in ("row_chosen", "card_placed"):
                    break
                turn.append(later)
            placed = [e.card for (_, e, k) in events[at + 1 : at + 1 + len(turn)] if k == "card_placed"]
            assert placed == sorted(play.card for play in events[at][1].plays)
    assert kinds[0] == "hand_dealt" and kinds[-2:] == ["hand_scored", "game_ended"]
    # Scores: the game so far, the current hand's takes included (each Update's events come
    # before its requests, and a request is sent only once the events before it are).
    taken = [0, 0, 0]
    checked = 0
    for update in updates:
        for event in update.events:
            if event.classic.WhichOneof("event") == "card_placed":
                taken[event.classic.card_placed.seat] += event.classic.card_placed.bulls
        for request in update.requests:
            assert list(request.classic.scores) == taken, (request.id, taken)
            checked += 1
    assert checked == len(requests) and sum(taken) > 0
    # After its games, the token is gone.
    assert first_reply(referee.address, hello(tokens["raw"]))[0] == grpc.StatusCode.UNAUTHENTICATED
