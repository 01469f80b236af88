"""A connection writes a match's requests with one ``wire.RequestWriter`` (the codec and the
match's encoded id looked up once), and its game starts and overs by hand (``wire.start_bytes``,
``over_bytes``): the bytes protobuf writes, for request ids of every encoded size (the referee's
ids count up across every match it plays), seat seeds up to 2**64 - 1 and negative scores."""

from __future__ import annotations

from typing import Any

import pytest

from referee import wire
from referee.rules import CHANCE, Decision, DecisionKind, Outcome, SeededChance, Termination
from referee.rules.core import Variant
from referee.rules.registry import make_variant
from sixnimmt.v1 import game_pb2, referee_pb2


@pytest.mark.parametrize(
    "request_id", [1, 127, 128, 16383, 16384, 16385, 2**21 - 1, 2**21, 2**28 - 1, 2**28, 2**31 - 1]
)
def test_requests_of_every_id_size_are_protobufs_bytes(request_id: int) -> None:
    variant, state = _dealt()
    pending = variant.pending(state)
    write = wire.RequestWriter("match-7", variant.name)
    for decision in pending:
        view = variant.view(state, decision.seat)
        for table_from in (0, 3, request_id):
            out = game_pb2.DecisionRequest()
            wire.request_to_wire(
                request_id, "match-7", variant.name, decision, view, 2000, 9_999, out, table_from
            )
            expected = out.SerializeToString()
            assert write(request_id, decision, view, 2000, 9_999, table_from) == expected
            assert wire.request_bytes(
                request_id, "match-7", variant.name, decision, view, 2000, 9_999, table_from
            ) == (expected)


@pytest.mark.parametrize("value", [0, 1, 16383, 16384, 2**21 - 1, 2**21, 2**35, -1, -(2**31)])
def test_varints_are_protobufs(value: int) -> None:
    out = game_pb2.DecisionRequest(table_from=value) if value >= 0 else game_pb2.DecisionRequest(seat=value)
    expected = out.SerializeToString()
    key = b"\x80\x01" if value >= 0 else b"\x18"
    assert (key + wire.varint(value) if value else b"") == expected


def test_a_tuple_decision_is_written_like_its_message() -> None:
    decision = Decision(1, DecisionKind.CARD, ((1, 2), (), (300, 4)))
    variant, state = _dealt()
    view = variant.view(state, 1)
    out = game_pb2.DecisionRequest()
    wire.request_to_wire(20_000, "m", variant.name, decision, view, 1, 0, out)
    assert wire.RequestWriter("m", variant.name)(20_000, decision, view, 1, 0) == out.SerializeToString()


def _dealt() -> tuple[Variant[Any, Any], Any]:
    """A classic game just dealt: its variant and state."""
    variant = make_variant("classic", {"players": 3, "hands": 1, "target": None})
    state, chance = variant.initial_state(), SeededChance(3)
    while variant.pending(state)[0].seat == CHANCE:
        state, _ = variant.apply(state, {CHANCE: variant.sample_chance(state, chance)})
    return variant, state


@pytest.mark.parametrize(
    ("seat", "seed", "names"),
    [(0, 0, ("a", "b")), (3, 2**64 - 1, ("ä", "", "bot-3", "x")), (1, 12345, ())],
)
def test_game_starts_as_bytes_are_protobufs(seat: int, seed: int, names: tuple[str, ...]) -> None:
    config = {"players": 4, "hands": 1, "target": None}
    for match_id in ("m-1", "m-2", ""):
        for variant in ("classic", ""):
            out = referee_pb2.GameStart()
            wire.start_to_wire(match_id, seat, variant, config, seed, names, out)
            assert wire.start_bytes(match_id, seat, variant, config, seed, names) == out.SerializeToString()


@pytest.mark.parametrize(
    "outcome",
    [
        Outcome((66, -3, 0), (1, 3, 2), Termination.TARGET_REACHED),
        Outcome((), (), Termination.HANDS_PLAYED),
        Outcome((2**31 - 1,), (1,), Termination.FORFEIT),
    ],
)
def test_game_overs_as_bytes_are_protobufs(outcome: Outcome) -> None:
    for match_id, seat in (("m", 0), ("match-9", 5)):
        out = referee_pb2.GameOver()
        wire.over_to_wire(match_id, seat, outcome, out)
        assert wire.over_bytes(match_id, seat, outcome) == out.SerializeToString()
