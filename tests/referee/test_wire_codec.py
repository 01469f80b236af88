"""The codecs against the wire's golden bytes: every view, request and event of random legal games of
every variant converts to exactly the bytes the hand-written codecs sent (``wire_golden.json``) and
back to the same domain value."""

from __future__ import annotations

import json
from collections import defaultdict

import pytest
from wire_golden import GAMES, GOLDEN, Game, digests, messages

from referee import wire
from sixnimmt.v1 import game_pb2

REWRITE = "If the change to the wire is intended, run `.venv/bin/python tests/referee/wire_golden.py`."


def _golden() -> dict[str, dict[str, object]]:
    data: dict[str, dict[str, object]] = json.loads(GOLDEN.read_text())
    return data


@pytest.mark.parametrize("game", GAMES, ids=lambda game: game.name)
def test_every_message_of_a_random_game_has_the_golden_bytes(game: Game) -> None:
    golden = _golden()[game.name]
    fresh = digests(game)
    assert fresh["kinds"].keys() == golden["kinds"].keys(), REWRITE  # type: ignore[attr-defined]
    for kind, expected in golden["kinds"].items():  # type: ignore[attr-defined]
        assert fresh["kinds"][kind] == expected, f"{game.name}: the {kind} messages changed. {REWRITE}"
    assert fresh["digest"] == golden["digest"], f"{game.name}: the order of the messages changed. {REWRITE}"


@pytest.mark.parametrize("game", GAMES, ids=lambda game: game.name)
def test_every_message_of_a_random_game_comes_back_as_it_went(game: Game) -> None:
    codec = wire.codec(game.build().name)
    for message in messages(game):
        kind = message.kind.split(":")[0]
        if kind == "event":
            parsed_event = game_pb2.MatchEvent.FromString(message.data)
            assert parsed_event.WhichOneof("payload") == codec.view_field
            back = wire.event_from_wire(parsed_event)
        else:
            parsed = game_pb2.DecisionRequest.FromString(message.data)
            assert parsed.WhichOneof("view") == codec.view_field
            if kind == "request":
                assert wire.decision_from_wire(parsed) == message.decision
                back = wire.view_from_wire(parsed)
            else:
                back = codec.view_from_wire(parsed, message.decision)  # type: ignore[arg-type]
        assert type(back) is type(message.value)
        assert back == message.value, message.kind


def test_the_golden_games_send_every_event_message_of_every_game() -> None:
    """Each ``oneof`` field of each game's event message occurs in some golden game, and every game
    on the wire has golden games."""
    seen: dict[str, set[str]] = defaultdict(set)
    for game in GAMES:
        field = wire.codec(game.build().name).view_field
        kinds: dict[str, object] = _golden()[game.name]["kinds"]  # type: ignore[assignment]
        seen[field].update(kind.split(":")[1] for kind in kinds if kind.startswith("event:"))
    payload = game_pb2.MatchEvent.DESCRIPTOR.oneofs_by_name["payload"]
    assert set(seen) == {field.name for field in payload.fields}
    for field in payload.fields:
        (events,) = field.message_type.oneofs
        wanted = {"".join(part.title() for part in f.name.split("_")) for f in events.fields}
        assert seen[field.name] == wanted, field.name
