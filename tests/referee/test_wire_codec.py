"""The codecs against the wire's golden bytes: every view, request and event of random legal games of
every variant converts to exactly the bytes the hand-written codecs sent (``wire_golden.json``) and
back to the same domain value."""

from __future__ import annotations

import json
from collections import defaultdict
from typing import Any, NamedTuple

import pytest
from wire_golden import GAMES, GOLDEN, Game, digests, messages

from games.classic.rules import classic
from referee import wire
from referee.rules import DecisionKind, make_variant
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


# -- the generic codec's declarations --------------------------------------------------------


class Chosen(NamedTuple):
    """``RowChosen`` with another name for ``seat``."""

    who: int
    card: int
    row: int


class Play(NamedTuple):
    card: int
    seat: int


class Revealed(NamedTuple):
    """``CardsRevealed`` with its plays as records rather than pairs."""

    hand: int
    turn: int
    plays: tuple[Play, ...]


class Short(NamedTuple):
    """``RowChosen`` without its row."""

    seat: int
    card: int


class Typed(NamedTuple):
    """``RowChosen`` with a string where the message has a number."""

    seat: int
    card: str
    row: int


def _classic(*events: type, **options: Any) -> wire.Codec:
    """A codec of classic views and the given events in place of classic's own."""
    own = {classic.HandDealt, classic.CardsRevealed, classic.RowChosen, classic.CardPlaced,
           classic.HandScored, classic.GameEnded}  # fmt: skip
    replaced = {wire._camel_to_snake(cls.__name__) for cls in events}
    replaced |= set(options.get("event_fields", {}).values())
    kept = [cls for cls in own if wire._camel_to_snake(cls.__name__) not in replaced]
    return wire.Codec(("classic-test",), "classic", classic.ClassicView, (*kept, *events), **options)


def _bytes(codec: wire.Codec, event: Any) -> bytes:
    (message,) = codec.events_to_wire("m", 1, (event,))
    return message.SerializeToString()


def test_a_field_of_another_name_maps_through_names() -> None:
    codec = _classic(Chosen, names={Chosen: {"who": "seat"}}, event_fields={Chosen: "row_chosen"})
    data = _bytes(codec, Chosen(2, 55, 1))
    assert data == _bytes(wire.codec("classic"), classic.RowChosen(2, 55, 1))
    assert codec.event_from_wire(game_pb2.MatchEvent.FromString(data)) == Chosen(2, 55, 1)


def test_nested_records_are_messages_and_pairs_are_too() -> None:
    codec = _classic(Revealed, event_fields={Revealed: "cards_revealed"})
    event = Revealed(1, 3, (Play(4, 0), Play(17, 2), Play(90, 1)))
    data = _bytes(codec, event)
    assert data == _bytes(wire.codec("classic"), classic.CardsRevealed(1, 3, ((4, 0), (17, 2), (90, 1))))
    assert codec.event_from_wire(game_pb2.MatchEvent.FromString(data)) == event


@pytest.mark.parametrize(
    ("events", "options", "problem"),
    [
        ((Short,), {"event_fields": {Short: "row_chosen"}}, r"fields of no record field: \['row'\]"),
        ((Typed,), {"event_fields": {Typed: "row_chosen"}}, "does not fit the wire field"),
        ((Chosen,), {"event_fields": {Chosen: "row_chosen"}}, "Chosen.who has no field 'who'"),
        ((Chosen,), {}, "event Chosen has no field 'chosen'"),
        ((Chosen,), {"event_fields": {Chosen: "row_chosen"}, "names": {Chosen: {"x": "seat"}}}, "no field x"),
        ((), {"shared": ("tabel",)}, "no field tabel to share"),
        ((Chosen, classic.RowChosen), {"event_fields": {Chosen: "row_chosen"}}, "two event types"),
    ],
)
def test_a_declaration_that_does_not_fit_its_messages_fails_when_compiled(
    events: tuple[type, ...], options: dict[str, Any], problem: str
) -> None:
    with pytest.raises(TypeError, match=problem):
        _classic(*events, **options)


def test_every_event_message_needs_an_event_type() -> None:
    with pytest.raises(TypeError, match=r"holds events not declared: \['game_ended'\]"):
        wire.Codec(("classic-test",), "classic", classic.ClassicView,
                   (classic.HandDealt, classic.CardsRevealed, classic.RowChosen, classic.CardPlaced,
                    classic.HandScored))  # fmt: skip


def test_a_game_is_a_field_of_the_envelope() -> None:
    with pytest.raises(TypeError, match=r"DecisionRequest\.view has no field 'classik'"):
        wire.Codec(("classic-test",), "classik", classic.ClassicView, ())


def test_each_variant_has_one_codec_and_a_view_of_another_type_is_refused() -> None:
    with pytest.raises(ValueError, match="has a codec already"):
        wire.register(wire.codec("classic"))
    game = make_variant("junior-basic", {"players": 2})
    view = game.view(game.initial_state(), 0)
    with pytest.raises(wire.WireError, match="no wire form for JuniorView as ClassicView"):
        wire.codec("classic").view_to_wire(view, game_pb2.DecisionRequest())


# -- the anniversary variant ------------------------------------------------------------------


def test_an_anniversary_view_keeps_its_flags_and_the_card_being_placed() -> None:
    """Blocked and 7 nimmt! rows, the card being placed (absent while cards are chosen) and a
    compound special-card decision come back as they went."""
    from games.anniversary.rules.anniversary import Anniversary, AnniversaryConfig

    game = Anniversary(AnniversaryConfig(players=3))
    state = game.position(
        [(10, 11, 12, 13, 14, 15), (30,), (50, 51), (70,)],
        [(16, 40), (20, 60), (2, 90)],
        [(1, 7), (3, 6), (2, 5)],
        sevens=(True, False, False, False),
        blocked=(False, False, True, False),
    )
    choosing = game.view(state, 1)
    assert choosing.placing is None
    state, _ = game.apply(state, {0: 16, 1: 60, 2: 2})
    (decision,) = game.pending(state)
    placing = game.view(state, decision.seat)
    assert placing.placing is not None and placing.phase == "special"
    assert decision.kind is DecisionKind.ACTION_CARD
    for view in (choosing, placing):
        assert view.decision is not None
        out = game_pb2.DecisionRequest()
        wire.request_to_wire(1, "m", "anniversary", view.decision, view, 2000, 0, out)
        parsed = game_pb2.DecisionRequest.FromString(out.SerializeToString())
        assert parsed.WhichOneof("view") == "anniversary"
        assert wire.decision_from_wire(parsed) == view.decision
        back = wire.view_from_wire(parsed)
        assert back == view
        assert back.sevens == (True, False, False, False)  # type: ignore[attr-defined]
        assert back.blocked == (False, False, True, False)  # type: ignore[attr-defined]
    assert placing.placing is not None and wire.view_from_wire(parsed).placing == placing.placing  # type: ignore[attr-defined]
