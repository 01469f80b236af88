"""docs/protocol.md holds: its examples parse against the .proto, its claims hold on a real referee.

Every fenced block whose info string is ``textproto MESSAGE`` or ``json MESSAGE`` is parsed as that
message of ``sixnimmt.v1`` (text format, or proto3 JSON), unknown fields refused. Classic's table of
``config_json`` keys is the engine's config. The claims a bot author relies on (status codes for a
bad Hello, the order of events in a turn, how turns and scores count, single-option decisions,
tokens after their games) are checked against a referee process, with a bot that uses nothing but
the generated stubs; so are those a client written from the doc alone met (issue 31): late answers
after a timeout, one-option requests of a step every seat plays, the Goodbye that tells a fault
ending the stream and answers a bot's Goodbye, a key's first Welcome, stray notices, ``bank_ms``
once ``time_control`` is set, TLS (subjectAltName, plaintext on a TLS port), and a flood counted in
replies.
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
from testkit import self_signed_certificate

from arena.matches import MatchPlan, RefereeClient, local_referee, spawn_bot
from games.classic.rules.classic import Classic
from referee.faults import FaultKind
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


# -- what a client written from the doc alone relies on (issue 31) -------------------------------

PLAY = "/sixnimmt.v1.Referee/Play"
ONE_HAND = {"players": 2, "hands": 1, "target": None}


class Wire:
    """A client of raw bytes (so it can send undecodable ones): ``on(message, send)`` sees every
    message as it comes; the messages and how the call ended are recorded."""

    def __init__(self, address: str, token: str, on: Any) -> None:
        self.received: list[referee_pb2.RefereeMessage] = []
        self.status: grpc.StatusCode | None = None
        self.details = ""
        self.outgoing: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self.send(hello(token))
        self.on = on
        self.channel = grpc.insecure_channel(address)
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def send(self, message: referee_pb2.BotMessage | bytes) -> None:
        self.outgoing.put(message if isinstance(message, bytes) else message.SerializeToString())

    def _run(self) -> None:
        call = self.channel.stream_stream(PLAY, request_serializer=None, response_deserializer=None)
        try:
            for raw in call(iter(self.outgoing.get, None)):
                message = referee_pb2.RefereeMessage.FromString(raw)
                self.received.append(message)
                self.on(message, self.send)
            self.status = grpc.StatusCode.OK
        except grpc.RpcError as exc:
            self.status, self.details = exc.code(), exc.details()
        finally:
            self.outgoing.put(None)

    def join(self) -> None:
        self.thread.join(120)
        assert not self.thread.is_alive(), "the stream did not end"
        self.channel.close()

    def notices(self) -> list[Any]:
        return [f for m in self.received if m.WhichOneof("kind") == "update" for f in m.update.faults]

    def requests(self) -> list[Any]:
        return [r for m in self.received if m.WhichOneof("kind") == "update" for r in m.update.requests]


def answer_all(message: referee_pb2.RefereeMessage, send: Any, skip: set[int] | None = None) -> None:
    """Answer every request of an Update with its first option (a number or a tuple)."""
    if message.WhichOneof("kind") != "update" or not message.update.requests:
        return
    batch = referee_pb2.BotMessage()
    for request in message.update.requests:
        if skip is not None and request.id in skip:
            continue
        reply = batch.decisions.replies.add(id=request.id)
        if request.tuple_options:
            reply.action.tuple.values.extend(request.tuple_options[0].values)
        else:
            reply.action.number = request.options[0]
    if batch.decisions.replies:
        send(batch)


def with_house(
    referee: RefereeClient, config: dict[str, Any] = ONE_HAND, **time_control: Any
) -> tuple[str, str, Any]:
    """A two-seat classic match: ("bot", "house"); the house is a reference bot process."""
    (match_id,), tokens = referee.create_matches(
        "classic", config, [MatchPlan(("bot", "house"), 5)], **time_control
    )
    house = spawn_bot(
        "lowest", referee=referee.address, token=tokens["house"], variant="classic", name="house"
    )
    return match_id, tokens["bot"], house


def test_a_late_answer_after_a_timeout_is_ignored_and_a_second_is_a_protocol_fault(
    referee: RefereeClient,
) -> None:
    match_id, token, house = with_house(referee, decision_ms=300, bank_ms=0)
    held: list[int] = []

    def on(message: referee_pb2.RefereeMessage, send: Any) -> None:
        if message.WhichOneof("kind") != "update":
            return
        for notice in message.update.faults:
            if notice.kind == game_pb2.FAULT_KIND_TIMEOUT and notice.request_id in held:
                for _ in range(2):  # late, after the timeout was told: twice
                    late = referee_pb2.BotMessage()
                    late.decisions.replies.add(id=notice.request_id).action.number = 999
                    send(late)
        if not held and message.update.requests:
            held.append(message.update.requests[0].id)  # the first request: not answered in time
        answer_all(message, send, skip=set(held))

    bot = Wire(referee.address, token, on)
    bot.join()
    assert house.wait(60) == 0
    notices = [(n.kind, n.request_id, n.reason) for n in bot.notices()]
    assert notices == [
        (game_pb2.FAULT_KIND_TIMEOUT, held[0], "no answer within 300 ms and the 0 ms left in the time bank"),
        (game_pb2.FAULT_KIND_PROTOCOL, held[0], "a second answer to the same request"),
    ], notices  # the first late answer: nothing; the second: a protocol fault
    seat = referee.result(match_id).seats[0]
    assert dict(seat.faults) == {FaultKind.TIMEOUT: 1, FaultKind.PROTOCOL: 1}


def test_one_option_decisions_of_a_step_every_seat_plays_are_sent(referee: RefereeClient) -> None:
    """Classic asks them all; Junior and the board game make one seat's forced decision themselves,
    but the board game's tile choice (every seat at once) comes with one option too."""
    seen: dict[str, list[Any]] = {}
    for variant in ("board", "junior-experts"):
        (match_id,), tokens = referee.create_matches(variant, {"players": 2}, [MatchPlan(("a", "b"), 3)])
        bots = [Wire(referee.address, token, answer_all) for token in tokens.values()]
        for bot in bots:
            bot.join()
        assert referee.result(match_id).status == "finished"
        seen[variant] = [r for bot in bots for r in bot.requests()]
    single = [r for r in seen["board"] if len(r.options) + len(r.tuple_options) == 1]
    assert {r.kind for r in single} <= {game_pb2.DECISION_KIND_CARD, game_pb2.DECISION_KIND_CARDS}
    assert any(r.kind == game_pb2.DECISION_KIND_CARD for r in single), "no last tile asked"
    assert seen["junior-experts"] and not [
        r for r in seen["junior-experts"] if len(r.options) + len(r.tuple_options) == 1
    ]


def _ending(referee: RefereeClient, act: Any) -> tuple[Wire, Any]:
    """A bot that does ``act(send)`` once welcomed (and answers nothing): its Wire and its seat's result."""
    match_id, token, house = with_house(referee)

    def on(message: referee_pb2.RefereeMessage, send: Any) -> None:
        if message.WhichOneof("kind") == "welcome":
            act(send)

    bot = Wire(referee.address, token, on)
    bot.join()
    assert house.wait(60) == 0
    return bot, referee.result(match_id).seats[0]


def test_a_fault_that_ends_the_stream_is_told_in_goodbye_and_the_stream_ends_ok(
    referee: RefereeClient,
) -> None:
    made_up = 1_000_000_000_000

    def garbage(send: Any) -> None:
        send(b"\xff\xff\xff\xff\x0f" + b"\xff" * 64)

    def empties(send: Any) -> None:
        for _ in range(70):
            send(referee_pb2.BotMessage())

    def strays(send: Any) -> None:
        for number in range(70):
            stray = referee_pb2.BotMessage()
            stray.decisions.replies.add(id=made_up + number).action.number = 1
            send(stray)

    def goodbye(send: Any) -> None:
        send(referee_pb2.BotMessage(goodbye=referee_pb2.Goodbye(reason="leaving")))

    cases = [
        (garbage, "sent a message that does not decode", FaultKind.PROTOCOL),
        (empties, "flood: too many messages that concern none of its seats", FaultKind.PROTOCOL),
        (strays, "flood: too many messages that concern none of its seats", FaultKind.PROTOCOL),
        (goodbye, "said goodbye (leaving)", FaultKind.DISCONNECT),  # the referee's answer to a Goodbye
    ]
    for act, reason, kind in cases:
        bot, seat = _ending(referee, act)
        last = bot.received[-1]
        assert (bot.status, last.WhichOneof("kind"), last.goodbye.reason) == (
            grpc.StatusCode.OK,
            "goodbye",
            reason,
        )
        assert dict(seat.faults) == {kind: 1} and [r[1] for r in seat.reasons] == [reason]
        # A stray is told: kind protocol, no match, seat -1, the id a stray reply named (else 0).
        strayed = [(n.kind, n.match_id, n.seat, n.request_id) for n in bot.notices()]
        if act is empties:
            assert strayed and set(strayed) == {(game_pb2.FAULT_KIND_PROTOCOL, "", -1, 0)}
        if act is strays:
            assert strayed == [
                (game_pb2.FAULT_KIND_PROTOCOL, "", -1, made_up + i) for i in range(len(strayed))
            ]
            assert len(strayed) >= 64


def test_the_flood_limit_counts_replies_not_messages(referee: RefereeClient) -> None:
    """One message of 300 replies to the first request is a flood at once."""
    match_id, token, house = with_house(referee)
    messages = []

    def on(message: referee_pb2.RefereeMessage, send: Any) -> None:
        if message.WhichOneof("kind") == "update" and message.update.requests and not messages:
            request = message.update.requests[0]
            batch = referee_pb2.BotMessage()
            for _ in range(300):
                batch.decisions.replies.add(id=request.id).action.number = request.options[0]
            messages.append(batch)
            send(batch)

    bot = Wire(referee.address, token, on)
    bot.join()
    assert house.wait(60) == 0
    assert len(messages) == 1 and bot.received[-1].goodbye.reason == "flood: more replies than requests"
    seat = referee.result(match_id).seats[0]
    assert seat.faults.get(FaultKind.PROTOCOL, 0) >= 1


def test_bank_ms_is_as_given_once_time_control_is_set(referee: RefereeClient) -> None:
    """No time_control: the referee's defaults; a time_control without bank_ms: no bank."""
    from referee.settings import load

    defaults = load({})
    firsts = {}
    for label, time_control in (("unset", {}), ("decision only", {"decision_ms": 1500})):
        _, token, house = with_house(referee, **time_control)
        bot = Wire(referee.address, token, answer_all)
        bot.join()
        assert house.wait(60) == 0
        first = bot.requests()[0]
        firsts[label] = (first.deadline_ms, first.time_bank_ms)
    assert firsts == {"unset": (defaults.decision_ms, defaults.bank_ms), "decision only": (1500, 0)}
    proto = (DOC.parents[1] / "proto" / "sixnimmt" / "v1" / "referee.proto").read_text()
    comment = proto[proto.index("message TimeControl") : proto.index("uint32 bank_ms")]
    assert "(default 10000)" not in comment and "0 being no bank" in comment


def test_the_first_welcome_of_a_key_lists_the_seats_that_waited_for_it(referee: RefereeClient) -> None:
    """remote_wait seats a remote entrant while no bot of its account is connected: a first
    connection with the key is welcomed with that seat."""
    import hashlib
    import secrets

    key = f"snk_doc{secrets.token_hex(4)}_{secrets.token_urlsafe(16)}"
    request = referee_pb2.SetRemoteKeysRequest()
    request.keys.add(key_id=key[4:15], account="docs", sha256=hashlib.sha256(key.encode()).hexdigest(),
                     max_connections=1, max_matches=4)  # fmt: skip
    referee.stub.SetRemoteKeys(request, timeout=10, metadata=referee.metadata)
    (match_id,), tokens = referee.create_matches(
        "classic",
        ONE_HAND,
        [MatchPlan(("x", "house"), 9)],
        remote={"x": "docs"},
        remote_wait=True,
        connect_ms=60_000,
    )
    house = spawn_bot(
        "lowest", referee=referee.address, token=tokens["house"], variant="classic", name="house"
    )

    def on(message: referee_pb2.RefereeMessage, send: Any) -> None:
        answer_all(message, send)
        if message.WhichOneof("kind") == "update" and any(
            o.match_id == match_id for o in message.update.overs
        ):
            send(
                referee_pb2.BotMessage(goodbye=referee_pb2.Goodbye(reason="done"))
            )  # a standing key: no goodbye of its own

    bot = Wire(referee.address, key, on)
    bot.join()
    assert house.wait(60) == 0
    welcome = bot.received[0].welcome
    assert [(s.match_id, s.seat) for s in welcome.seats] == [(match_id, 0)]
    assert bot.received[-1].goodbye.reason == "said goodbye (done)"
    assert not referee.result(match_id).seats[0].faults  # it played its seat, and left with no game


def test_tls_as_the_doc_tells_a_client_in_another_language(tmp_path: Path) -> None:
    """The certificate's subjectAltName names what clients dial; a plaintext client on the TLS
    port (and a TLS client on a plaintext one) gets UNAVAILABLE, never a referee status."""
    import os
    import subprocess
    import sys

    from testkit import free_port, wait_for

    cert, key = self_signed_certificate(tmp_path)
    plain_port = free_port()
    ready = tmp_path / "ready"
    env = {k: v for k, v in os.environ.items() if not k.startswith("SIXNIMMT_")}
    process = subprocess.Popen(
        [sys.executable, "-m", "bot_sdk.cli", "referee", "serve", "--listen", "127.0.0.1:0",
         "--tls-cert", str(cert), "--tls-key", str(key), "--also-listen", f"127.0.0.1:{plain_port}",
         "--ready-file", str(ready)],
        env={**env, "SIXNIMMT_REFEREE_METRICS_PORT": "0"},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        wait_for(lambda: ready.exists() or process.poll() is not None, 30, "the referee to start")
        port = ready.read_text().rsplit(":", 1)[1]
        roots = grpc.ssl_channel_credentials(root_certificates=cert.read_bytes())

        def status(channel: grpc.Channel) -> tuple[grpc.StatusCode, str]:
            with channel:
                stub = referee_pb2_grpc.RefereeStub(channel)
                try:
                    next(stub.Play(iter([hello("no-such-token")]), timeout=20))
                except grpc.RpcError as exc:
                    return exc.code(), exc.details()
            raise AssertionError("a bad token was welcomed")

        # The referee answers (a bad token: its own status) whichever SAN entry the client dials.
        for target in (f"127.0.0.1:{port}", f"localhost:{port}"):
            assert status(grpc.secure_channel(target, roots))[0] == grpc.StatusCode.UNAUTHENTICATED
        # A name the certificate does not carry fails the handshake.
        elsewhere = grpc.secure_channel(
            f"127.0.0.1:{port}", roots, options=[("grpc.ssl_target_name_override", "elsewhere.example")]
        )
        assert status(elsewhere)[0] == grpc.StatusCode.UNAVAILABLE
        # Plaintext on the TLS port, TLS on the plaintext port: UNAVAILABLE, no referee status.
        code, details = status(grpc.insecure_channel(f"127.0.0.1:{port}"))
        assert code == grpc.StatusCode.UNAVAILABLE, details
        assert status(grpc.secure_channel(f"127.0.0.1:{plain_port}", roots))[0] == grpc.StatusCode.UNAVAILABLE
        # The plaintext address serves plaintext.
        assert status(grpc.insecure_channel(f"127.0.0.1:{plain_port}"))[0] == grpc.StatusCode.UNAUTHENTICATED
    finally:
        process.terminate()
        process.wait(20)


def test_the_doc_says_what_a_client_meets() -> None:
    """The claims the tests above check are the doc's words (a client is written from them)."""
    text = " ".join(DOC.read_text().split())
    for claim in (
        "the first answer that comes after the timeout is ignored (no fault and no notice",
        "A step that asks **every seat at once** is always sent, one option or not",
        "The referee answers a bot's `goodbye` with its own, `goodbye{reason: \"said goodbye",
        "A fault that ends the stream is told in the referee's last message",
        "the seats of matches made with `remote_wait` while no bot of the account was connected",
        "Its `kind` is `FAULT_KIND_PROTOCOL`, and its `request_id` the id a stray reply named",
        "`bank_ms` is **as given once `time_control` is set, 0 being no bank**",
        "**The certificate must name the host the client dials in its `subjectAltName`**",
        "**A plaintext client on a TLS port** never reaches the referee",
        "Replies are counted, not messages",
    ):
        assert claim in text, claim
