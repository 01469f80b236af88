"""The one conversion module between the wire (``sixnimmt.v1``) and the domain (``referee.rules``).

The referee server converts requests, events and results to the wire here; the SDK converts
them back here. Each variant has a codec for its typed view and events; a new variant adds
one codec class to :data:`CODECS`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any, ClassVar

from referee.rules.classic import (
    CardPlaced,
    CardsRevealed,
    ClassicView,
    GameEnded,
    HandDealt,
    HandScored,
    RowChosen,
)
from referee.rules.core import Action, Decision, DecisionKind, Event, Outcome, Termination, View
from referee.rules.errors import RulesError
from sixnimmt.v1 import classic_pb2, game_pb2, referee_pb2

PROTOCOL_VERSION = 1

KIND_TO_WIRE: dict[DecisionKind, int] = {
    DecisionKind.CARD: game_pb2.DECISION_KIND_CARD,
    DecisionKind.ROW: game_pb2.DECISION_KIND_ROW,
    DecisionKind.CARD_ROW: game_pb2.DECISION_KIND_CARD_ROW,
    DecisionKind.CARDS: game_pb2.DECISION_KIND_CARDS,
    DecisionKind.LUCK: game_pb2.DECISION_KIND_LUCK,
    DecisionKind.ACTION_CARD: game_pb2.DECISION_KIND_ACTION_CARD,
}
KIND_FROM_WIRE: dict[int, DecisionKind] = {v: k for k, v in KIND_TO_WIRE.items()}


class WireError(RulesError):
    """A wire message that does not convert to a domain value."""


# -- actions ---------------------------------------------------------------------------------


def action_to_wire(action: Action, out: game_pb2.Action) -> None:
    """Write an action into ``out``."""
    if isinstance(action, tuple):
        out.tuple.values.extend(action)  # type: ignore[arg-type]
    else:
        out.number = action


def action_from_wire(message: game_pb2.Action) -> Action:
    """An action from the wire; a missing action is a :class:`WireError`."""
    which = message.WhichOneof("value")
    if which == "number":
        return message.number
    if which == "tuple":
        return tuple(message.tuple.values)
    raise WireError("the reply holds no action")


# -- variant codecs --------------------------------------------------------------------------


class Codec:
    """Converts one variant's views and events."""

    variant: ClassVar[str]
    view_field: ClassVar[str]
    """The name of the variant's field in the ``view`` and ``payload`` oneofs."""

    def view_to_wire(self, view: View, out: game_pb2.DecisionRequest) -> None:
        raise NotImplementedError

    def view_from_wire(self, message: game_pb2.DecisionRequest, decision: Decision) -> View:
        raise NotImplementedError

    def event_to_wire(self, event: Event, out: game_pb2.MatchEvent) -> None:
        raise NotImplementedError

    def event_from_wire(self, message: game_pb2.MatchEvent) -> Event:
        raise NotImplementedError


def _rows(target: Any, rows: Iterable[Sequence[int]]) -> None:
    for row in rows:
        target.add().cards.extend(row)


class ClassicCodec(Codec):
    """Classic 6 nimmt!."""

    variant = "classic"
    view_field = "classic"

    def __init__(self) -> None:
        # The seats asked in one step share the table: its wire form is built once and copied.
        self._table_of: tuple[Any, ...] = ()
        self._table = classic_pb2.ClassicView()

    def view_to_wire(self, view: View, out: game_pb2.DecisionRequest) -> None:
        assert isinstance(view, ClassicView)
        key = (view.rows, view.piles, view.scores, view.players, view.top_card)
        if len(key) != len(self._table_of) or any(
            a is not b for a, b in zip(key, self._table_of, strict=True)
        ):
            table = classic_pb2.ClassicView(
                players=view.players,
                scores=view.scores,
                top_card=view.top_card,
                row_capacity=view.row_capacity,
                hand_size=view.hand_size,
                professional=view.professional,
            )
            _rows(table.rows, view.rows)
            _rows(table.piles, view.piles)
            self._table, self._table_of = table, key
        v = out.classic
        v.CopyFrom(self._table)
        v.seat = view.seat
        v.phase = view.phase
        v.hand_no = view.hand_no
        v.turn = view.turn
        v.hand.extend(view.hand)
        for card, seat in view.revealed:
            v.revealed.add(card=card, seat=seat)

    def view_from_wire(self, message: game_pb2.DecisionRequest, decision: Decision) -> View:
        v = message.classic
        return ClassicView(
            seat=v.seat,
            players=v.players,
            phase=v.phase,
            hand_no=v.hand_no,
            turn=v.turn,
            hand=tuple(v.hand),
            rows=tuple(tuple(r.cards) for r in v.rows),
            piles=tuple(tuple(p.cards) for p in v.piles),
            scores=tuple(v.scores),
            revealed=tuple((p.card, p.seat) for p in v.revealed),
            decision=decision,
            top_card=v.top_card,
            row_capacity=v.row_capacity,
            hand_size=v.hand_size,
            professional=v.professional,
        )

    def event_to_wire(self, event: Event, out: game_pb2.MatchEvent) -> None:
        e = out.classic
        if isinstance(event, CardPlaced):
            e.card_placed.SetInParent()
            p = e.card_placed
            p.seat, p.card, p.row, p.left, p.bulls = (
                event.seat,
                event.card,
                event.row,
                event.left,
                event.bulls,
            )
            p.taken.extend(event.taken)
        elif isinstance(event, CardsRevealed):
            r = e.cards_revealed
            r.hand, r.turn = event.hand, event.turn
            for card, seat in event.plays:
                r.plays.add(card=card, seat=seat)
        elif isinstance(event, RowChosen):
            e.row_chosen.seat, e.row_chosen.card, e.row_chosen.row = event.seat, event.card, event.row
        elif isinstance(event, HandDealt):
            e.hand_dealt.hand = event.hand
            _rows(e.hand_dealt.rows, event.rows)
        elif isinstance(event, HandScored):
            e.hand_scored.hand = event.hand
            e.hand_scored.bulls.extend(event.bulls)
            e.hand_scored.totals.extend(event.totals)
        elif isinstance(event, GameEnded):
            e.game_ended.scores.extend(event.scores)
            e.game_ended.ranks.extend(event.ranks)
            e.game_ended.termination = event.termination
        else:
            raise WireError(f"no wire form for classic event {type(event).__name__}")

    def event_from_wire(self, message: game_pb2.MatchEvent) -> Event:
        e = message.classic
        which = e.WhichOneof("event")
        if which == "card_placed":
            p = e.card_placed
            return CardPlaced(p.seat, p.card, p.row, p.left, tuple(p.taken), p.bulls)
        if which == "cards_revealed":
            r = e.cards_revealed
            return CardsRevealed(r.hand, r.turn, tuple((p.card, p.seat) for p in r.plays))
        if which == "row_chosen":
            return RowChosen(e.row_chosen.seat, e.row_chosen.card, e.row_chosen.row)
        if which == "hand_dealt":
            return HandDealt(e.hand_dealt.hand, tuple(tuple(r.cards) for r in e.hand_dealt.rows))
        if which == "hand_scored":
            s = e.hand_scored
            return HandScored(s.hand, tuple(s.bulls), tuple(s.totals))
        if which == "game_ended":
            g = e.game_ended
            return GameEnded(tuple(g.scores), tuple(g.ranks), g.termination)
        raise WireError(f"unknown classic event {which!r}")


CODECS: dict[str, Codec] = {codec.variant: codec for codec in (ClassicCodec(),)}
"""Codecs by variant name."""

_CODEC_BY_FIELD: dict[str, Codec] = {codec.view_field: codec for codec in CODECS.values()}


def codec(variant: str) -> Codec:
    """The codec of a variant; a variant without one cannot be played over the wire yet."""
    try:
        return CODECS[variant]
    except KeyError:
        raise WireError(f"variant {variant!r} has no wire codec yet") from None


# -- requests, events, starts and overs ------------------------------------------------------


def request_to_wire(
    request_id: int,
    match_id: str,
    variant: str,
    decision: Decision,
    view: View,
    deadline_ms: int,
    bank_ms: int,
    out: game_pb2.DecisionRequest,
) -> None:
    """Write a decision request with the seat's view into ``out``."""
    out.id = request_id
    out.match_id = match_id
    out.seat = decision.seat
    out.kind = KIND_TO_WIRE[decision.kind]  # type: ignore[assignment]
    options = decision.options
    if options and isinstance(options[0], tuple):
        for option in options:
            out.tuple_options.add().values.extend(option)  # type: ignore[arg-type]
    else:
        out.options.extend(options)  # type: ignore[arg-type]
    out.deadline_ms = deadline_ms
    out.time_bank_ms = bank_ms
    codec(variant).view_to_wire(view, out)


def decision_from_wire(message: game_pb2.DecisionRequest) -> Decision:
    """The decision a request asks for, with its legal options."""
    kind = KIND_FROM_WIRE.get(message.kind)
    if kind is None:
        raise WireError(f"unknown decision kind {message.kind}")
    options: tuple[Action, ...]
    if message.tuple_options:
        options = tuple(tuple(o.values) for o in message.tuple_options)
    else:
        options = tuple(message.options)
    return Decision(message.seat, kind, options)


def view_from_wire(message: game_pb2.DecisionRequest) -> View:
    """The typed view of a request, its decision included."""
    field = message.WhichOneof("view")
    codec_ = _CODEC_BY_FIELD.get(field or "")
    if codec_ is None:
        raise WireError(f"request {message.id} holds no view this SDK knows ({field!r})")
    return codec_.view_from_wire(message, decision_from_wire(message))


_last_events: tuple[Sequence[Event], list[game_pb2.MatchEvent]] | None = None


def events_to_wire(variant: str, match_id: str, step: int, events: Sequence[Event], out: Any) -> None:
    """Append the wire form of ``events`` to the repeated field ``out``.

    A step's events go to every connection in the match: they are converted once (for the
    same ``events`` object) and copied.
    """
    global _last_events
    if _last_events is None or _last_events[0] is not events:
        convert = codec(variant).event_to_wire
        messages = []
        for event in events:
            message = game_pb2.MatchEvent(match_id=match_id, step=step)
            convert(event, message)
            messages.append(message)
        _last_events = (events, messages)
    out.extend(_last_events[1])


def event_from_wire(message: game_pb2.MatchEvent) -> Event:
    """A domain event from the wire."""
    field = message.WhichOneof("payload")
    codec_ = _CODEC_BY_FIELD.get(field or "")
    if codec_ is None:
        raise WireError(f"event of unknown variant payload {field!r}")
    return codec_.event_from_wire(message)


def start_to_wire(
    match_id: str,
    seat: int,
    variant: str,
    config: dict[str, Any],
    seat_seed: int,
    seat_names: Sequence[str],
    out: referee_pb2.GameStart,
) -> None:
    """Write a game start into ``out``."""
    out.match_id = match_id
    out.seat = seat
    out.variant = variant
    out.config_json = json.dumps(config, sort_keys=True)
    out.seat_seed = seat_seed
    out.seat_names.extend(seat_names)


def over_to_wire(match_id: str, seat: int, outcome: Outcome, out: referee_pb2.GameOver) -> None:
    """Write a game over into ``out``."""
    out.match_id = match_id
    out.seat = seat
    out.scores.extend(outcome.scores)
    out.ranks.extend(outcome.ranks)
    out.termination = outcome.termination.value


def outcome_from_wire(message: referee_pb2.GameOver) -> Outcome:
    """The outcome a game-over message announces."""
    return Outcome(tuple(message.scores), tuple(message.ranks), Termination(message.termination))


FAULT_TO_WIRE: dict[str, int] = {
    "timeout": game_pb2.FAULT_KIND_TIMEOUT,
    "crash": game_pb2.FAULT_KIND_CRASH,
    "disconnect": game_pb2.FAULT_KIND_DISCONNECT,
    "illegal": game_pb2.FAULT_KIND_ILLEGAL,
    "protocol": game_pb2.FAULT_KIND_PROTOCOL,
}
FAULT_FROM_WIRE: dict[int, str] = {v: k for k, v in FAULT_TO_WIRE.items()}

STATUS_TO_WIRE: dict[str, int] = {
    "waiting": game_pb2.MATCH_STATUS_WAITING,
    "running": game_pb2.MATCH_STATUS_RUNNING,
    "finished": game_pb2.MATCH_STATUS_FINISHED,
    "aborted": game_pb2.MATCH_STATUS_ABORTED,
}


def seat_result_to_wire(
    seat: int,
    entrant: str,
    score: int,
    rank: int,
    faults: dict[str, int],
    *,
    defaulted: int,
    decisions: int,
    forfeited: bool,
    think_ms: int,
    out: game_pb2.SeatResult,
) -> None:
    """Write one seat's result into ``out``."""
    out.seat = seat
    out.entrant = entrant
    out.score = score
    out.rank = rank
    for kind, count in sorted(faults.items()):
        out.faults.add(kind=FAULT_TO_WIRE[kind], count=count)  # type: ignore[arg-type]
    out.defaulted = defaulted
    out.decisions = decisions
    out.forfeited = forfeited
    out.think_ms = think_ms


def seat_faults_from_wire(message: game_pb2.SeatResult) -> dict[str, int]:
    """A seat result's faults by kind name."""
    return {FAULT_FROM_WIRE[f.kind]: f.count for f in message.faults}
