"""The one conversion module between the wire (``sixnimmt.v1``) and the domain (``referee.rules``).

The referee server converts requests, events and results to the wire here; the SDK converts
them back here. Each variant has a codec for its typed view and events; a new variant adds
one codec class to :data:`CODECS`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from functools import lru_cache
from typing import Any, ClassVar

from referee.faults import FaultKind, FaultNotice
from referee.rules import brettspiel_view, junior, junior_deck
from referee.rules.board import Board, load_board
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
from sixnimmt.v1 import board_pb2, classic_pb2, game_pb2, junior_pb2, referee_pb2

PROTOCOL_VERSION = 1

KIND_TO_WIRE: dict[DecisionKind, int] = {
    DecisionKind.CARD: game_pb2.DECISION_KIND_CARD,
    DecisionKind.ROW: game_pb2.DECISION_KIND_ROW,
    DecisionKind.CARD_ROW: game_pb2.DECISION_KIND_CARD_ROW,
    DecisionKind.CARDS: game_pb2.DECISION_KIND_CARDS,
    DecisionKind.LUCK: game_pb2.DECISION_KIND_LUCK,
    DecisionKind.ACTION_CARD: game_pb2.DECISION_KIND_ACTION_CARD,
    DecisionKind.PILE: game_pb2.DECISION_KIND_PILE,
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


FAULT_TO_WIRE: dict[FaultKind, int] = {
    FaultKind.TIMEOUT: game_pb2.FAULT_KIND_TIMEOUT,
    FaultKind.CRASH: game_pb2.FAULT_KIND_CRASH,
    FaultKind.DISCONNECT: game_pb2.FAULT_KIND_DISCONNECT,
    FaultKind.ILLEGAL: game_pb2.FAULT_KIND_ILLEGAL,
    FaultKind.PROTOCOL: game_pb2.FAULT_KIND_PROTOCOL,
    FaultKind.EXCEPTION: game_pb2.FAULT_KIND_EXCEPTION,
}
FAULT_FROM_WIRE: dict[int, FaultKind] = {v: k for k, v in FAULT_TO_WIRE.items()}


def fault_notice_to_wire(notice: FaultNotice, out: referee_pb2.FaultNotice) -> None:
    """Write a fault notice into ``out``."""
    out.kind = FAULT_TO_WIRE[notice.kind]  # type: ignore[assignment]
    out.request_id = notice.request_id
    out.match_id = notice.match_id
    out.seat = notice.seat
    out.reason = notice.reason


def fault_notice_from_wire(message: referee_pb2.FaultNotice) -> FaultNotice:
    """A fault notice from the wire (an unknown kind reads as a protocol fault)."""
    kind = FAULT_FROM_WIRE.get(message.kind, FaultKind.PROTOCOL)
    return FaultNotice(kind, message.match_id, message.seat, message.request_id, message.reason)


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
    faults: dict[FaultKind, int],
    *,
    defaulted: int,
    decisions: int,
    forfeited: bool,
    think_ms: int,
    out: game_pb2.SeatResult,
    reasons: dict[tuple[FaultKind, str], int] | None = None,
) -> None:
    """Write one seat's result into ``out``."""
    out.seat = seat
    out.entrant = entrant
    out.score = score
    out.rank = rank
    for kind, count in sorted(faults.items()):
        out.faults.add(kind=FAULT_TO_WIRE[FaultKind(kind)], count=count)  # type: ignore[arg-type]
    for (kind, reason), count in (reasons or {}).items():
        out.reasons.add(kind=FAULT_TO_WIRE[kind], reason=reason, count=count)  # type: ignore[arg-type]
    out.defaulted = defaulted
    out.decisions = decisions
    out.forfeited = forfeited
    out.think_ms = think_ms


def seat_faults_from_wire(message: game_pb2.SeatResult) -> dict[FaultKind, int]:
    """A seat result's faults by kind (a :class:`FaultKind` is its name as a string)."""
    return {FAULT_FROM_WIRE[f.kind]: f.count for f in message.faults if f.kind in FAULT_FROM_WIRE}


def seat_reasons_from_wire(message: game_pb2.SeatResult) -> list[tuple[FaultKind, str, int]]:
    """A seat result's fault reasons: (kind, reason, count)."""
    return [
        (FAULT_FROM_WIRE[r.kind], r.reason, r.count) for r in message.reasons if r.kind in FAULT_FROM_WIRE
    ]


# -- 6 nimmt! Junior -------------------------------------------------------------------------


@lru_cache(maxsize=16)
def _junior_deck(name: str, text: str) -> junior_deck.JuniorDeck:
    """The deck a Junior view names: a bundled file's ``name``, or the deck as JSON ``text``."""
    spec: str | dict[str, Any] = name
    if name and ("/" in name or "\\" in name):
        raise WireError(f"a Junior view names its deck by a path, not a bundled file name: {name!r}")
    if not name:
        try:
            loaded = json.loads(text) if text else None
        except ValueError as exc:
            raise WireError(f"a Junior view's deck is not JSON: {exc}") from exc
        if not isinstance(loaded, dict):
            raise WireError("a Junior view holds no deck")
        spec = loaded
    try:
        deck = junior_deck.load_deck(spec)
    except RulesError as exc:
        raise WireError(f"a Junior view's deck does not load: {exc}") from exc
    if name and deck.source != name:
        raise WireError(f"a Junior view names {name!r}, which is no bundled deck")
    return deck


class JuniorCodec(Codec):
    """6 nimmt! Junior, basic game; the subclasses serve the other modes with the same messages.

    A view carries its deck the way the match config does: a bundled deck by its file name,
    any other deck as JSON (serialised once per deck here, parsed once per text in the SDK).
    """

    variant = "junior-basic"
    view_field = "junior"

    def __init__(self) -> None:
        self._deck_of: junior_deck.JuniorDeck | None = None
        self._deck_text = ""

    def _deck_to_wire(self, deck: junior_deck.JuniorDeck, out: junior_pb2.JuniorView) -> None:
        if deck.source:
            out.deck_name = deck.source
            return
        if deck is not self._deck_of:
            self._deck_text = json.dumps(deck.to_json(), sort_keys=True, separators=(",", ":"))
            self._deck_of = deck
        out.deck_json = self._deck_text

    def view_to_wire(self, view: View, out: game_pb2.DecisionRequest) -> None:
        assert isinstance(view, junior.JuniorView)
        v = out.junior
        v.seat = view.seat
        v.players = view.players
        v.mode = view.mode
        v.phase = view.phase
        v.turn = view.turn
        v.to_move = view.to_move
        _rows(v.rows, view.rows)
        v.hand.extend(view.hand)
        v.hand_sizes.extend(view.hand_sizes)
        _rows(v.collected, view.collected)
        v.pile_size = view.pile_size
        if view.card is not None:
            v.card = view.card
        v.fewest_wins = view.fewest_wins
        v.row_limit = view.row_limit
        self._deck_to_wire(view.deck, v)

    def view_from_wire(self, message: game_pb2.DecisionRequest, decision: Decision) -> View:
        v = message.junior
        return junior.JuniorView(
            seat=v.seat,
            players=v.players,
            mode=v.mode,
            phase=v.phase,
            turn=v.turn,
            to_move=v.to_move,
            rows=tuple(tuple(r.cards) for r in v.rows),
            hand=tuple(v.hand),
            hand_sizes=tuple(v.hand_sizes),
            collected=tuple(tuple(c.cards) for c in v.collected),
            pile_size=v.pile_size,
            card=v.card if v.HasField("card") else None,
            decision=decision,
            fewest_wins=v.fewest_wins,
            row_limit=v.row_limit,
            deck=_junior_deck(v.deck_name, v.deck_json),
        )

    def event_to_wire(self, event: Event, out: game_pb2.MatchEvent) -> None:
        e = out.junior
        if isinstance(event, junior.CardPlaced):
            e.card_placed.seat, e.card_placed.card, e.card_placed.row = event.seat, event.card, event.row
        elif isinstance(event, junior.CardDrawn):
            e.card_drawn.seat, e.card_drawn.pile = event.seat, event.pile
        elif isinstance(event, junior.CardTurned):
            e.card_turned.seat, e.card_turned.card = event.seat, event.card
        elif isinstance(event, junior.CardPlayed):
            e.card_played.seat, e.card_played.card = event.seat, event.card
        elif isinstance(event, junior.RowCollected):
            r = e.row_collected
            r.seat, r.row, r.total = event.seat, event.row, event.total
            r.cards.extend(event.cards)
        elif isinstance(event, junior.CardsDealt):
            e.cards_dealt.hand_size = event.hand_size
            _rows(e.cards_dealt.rows, event.rows)
        elif isinstance(event, junior.GameEnded):
            e.game_ended.scores.extend(event.scores)
            e.game_ended.ranks.extend(event.ranks)
            e.game_ended.termination = event.termination
        else:
            raise WireError(f"no wire form for Junior event {type(event).__name__}")

    def event_from_wire(self, message: game_pb2.MatchEvent) -> Event:
        e = message.junior
        which = e.WhichOneof("event")
        if which == "card_placed":
            return junior.CardPlaced(e.card_placed.seat, e.card_placed.card, e.card_placed.row)
        if which == "card_drawn":
            return junior.CardDrawn(e.card_drawn.seat, e.card_drawn.pile)
        if which == "card_turned":
            return junior.CardTurned(e.card_turned.seat, e.card_turned.card)
        if which == "card_played":
            return junior.CardPlayed(e.card_played.seat, e.card_played.card)
        if which == "row_collected":
            r = e.row_collected
            return junior.RowCollected(r.seat, r.row, tuple(r.cards), r.total)
        if which == "cards_dealt":
            d = e.cards_dealt
            return junior.CardsDealt(d.hand_size, tuple(tuple(r.cards) for r in d.rows))
        if which == "game_ended":
            g = e.game_ended
            return junior.GameEnded(tuple(g.scores), tuple(g.ranks), g.termination)
        raise WireError(f"unknown Junior event {which!r}")


class JuniorAdvancedCodec(JuniorCodec):
    """6 nimmt! Junior, advanced game."""

    variant = "junior-advanced"


class JuniorExpertsCodec(JuniorCodec):
    """6 nimmt! Junior, experts' game."""

    variant = "junior-experts"


for _codec in (JuniorCodec(), JuniorAdvancedCodec(), JuniorExpertsCodec()):
    CODECS[_codec.variant] = _codec
    _CODEC_BY_FIELD.setdefault(_codec.view_field, _codec)
del _codec


# -- 6 nimmt! Brettspiel ---------------------------------------------------------------------


@lru_cache(maxsize=16)
def _board_layout(name: str, text: str, source: str) -> Board:
    """The layout a board view names: a packaged layout's ``name``, or the layout as JSON ``text``."""
    if name.endswith(".json"):
        raise WireError(f"a board view names a layout by a path, not a packaged name: {name!r}")
    try:
        if name:
            return load_board(name)
        if text:
            return Board.from_json(json.loads(text), source or "<board view>")
    except (RulesError, ValueError) as exc:
        raise WireError(f"a board view's layout does not load: {exc}") from exc
    raise WireError("a board view names no layout")


def _packaged(board: Board) -> bool:
    """Whether ``board`` is the packaged layout its source names (so the name alone carries it)."""
    if board.source.endswith(".json"):
        return False
    try:
        return load_board(board.source) == board
    except RulesError:
        return False


_FLAT_BOARD_EVENTS: dict[type[Any], str] = {
    brettspiel_view.RowOpened: "row_opened",
    brettspiel_view.RowShifted: "row_shifted",
    brettspiel_view.ActionCardsDealt: "action_cards_dealt",
    brettspiel_view.ActionCardPlayed: "action_card_played",
    brettspiel_view.StopSignsRemoved: "stop_signs_removed",
    brettspiel_view.TileDrawn: "tile_drawn",
    brettspiel_view.ActionCardDrawn: "action_card_drawn",
    brettspiel_view.ActionCardsReshuffled: "action_cards_reshuffled",
}
"""Board events whose fields are numbers, strings or lists of numbers: each field is the wire
message's field of the same name (the pro version's events)."""
_FLAT_BOARD_EVENT_OF = {field: cls for cls, field in _FLAT_BOARD_EVENTS.items()}


class BoardCodec(Codec):
    """6 nimmt! Brettspiel, the basic game or the pro version, with or without luck cards.

    A view carries what a bot needs to compute attachments and points itself: the board
    layout (a packaged one by its name, any other as JSON) and every tile's oxen. That part is
    the same for every view of a game, so its wire form is built once per board and tiles.
    """

    variant = "board"
    view_field = "board"

    def __init__(self) -> None:
        self._fixed_of: tuple[Board | None, tuple[int, ...]] = (None, ())
        self._fixed = board_pb2.BoardView()

    def _fixed_part(self, board: Board, oxen: tuple[int, ...]) -> board_pb2.BoardView:
        if board is not self._fixed_of[0] or oxen is not self._fixed_of[1]:
            fixed = board_pb2.BoardView()
            fixed.oxen.extend(oxen)
            if _packaged(board):
                fixed.board_name = board.source
            else:
                fixed.board_json = json.dumps(board.to_json(), sort_keys=True, separators=(",", ":"))
                fixed.board_source = board.source
            self._fixed, self._fixed_of = fixed, (board, oxen)
        return self._fixed

    def view_to_wire(self, view: View, out: game_pb2.DecisionRequest) -> None:
        assert isinstance(view, brettspiel_view.BrettspielView)
        v = out.board
        v.CopyFrom(self._fixed_part(view.board, view.oxen))
        v.seat = view.seat
        v.players = view.players
        v.phase = view.phase
        v.tile_set = view.tile_set
        v.tile_sets = view.tile_sets
        v.tiles_each = view.tiles_each
        v.round = view.round
        v.screen.extend(view.screen)
        v.screen_sizes.extend(view.screen_sizes)
        _rows(v.rows, view.rows)
        v.scores.extend(view.scores)
        for plus_points, positive_oxen in view.luck:
            v.luck.add(plus_points=plus_points, positive_oxen=positive_oxen)
        v.piles.plus_points, v.piles.positive_oxen = view.piles
        for tile, seat in view.revealed:
            v.revealed.add(tile=tile, seat=seat)
        v.attached = view.attached
        v.boxed.extend(view.boxed)
        v.supply_size = view.supply_size
        v.play_count = view.play_count
        if view.attaching is not None:
            v.attaching.SetInParent()
            v.attaching.tile, v.attaching.row, v.attaching.space = view.attaching
        v.draws = view.draws
        v.luck_cards = view.luck_cards
        if view.pro:
            v.pro = True
            v.stops.extend(view.stops)
            v.stop_signs = view.stop_signs
            v.action_cards.extend(view.action_cards)
            v.hand_sizes.extend(view.hand_sizes)
            v.action_pile_size = view.action_pile_size
            v.discard.extend(view.discard)
            if view.opening is not None:
                v.opening.tile, v.opening.taken_row = view.opening

    def view_from_wire(self, message: game_pb2.DecisionRequest, decision: Decision) -> View:
        v = message.board
        a = v.attaching
        return brettspiel_view.BrettspielView(
            seat=v.seat,
            players=v.players,
            phase=v.phase,
            tile_set=v.tile_set,
            tile_sets=v.tile_sets,
            tiles_each=v.tiles_each,
            round=v.round,
            screen=tuple(v.screen),
            screen_sizes=tuple(v.screen_sizes),
            rows=tuple(tuple(r.cards) for r in v.rows),
            scores=tuple(v.scores),
            luck=tuple((h.plus_points, h.positive_oxen) for h in v.luck),
            piles=(v.piles.plus_points, v.piles.positive_oxen),
            revealed=tuple((p.tile, p.seat) for p in v.revealed),
            attached=v.attached,
            boxed=tuple(v.boxed),
            supply_size=v.supply_size,
            play_count=v.play_count,
            attaching=(a.tile, a.row, a.space) if v.HasField("attaching") else None,
            draws=v.draws,
            decision=decision,
            board=_board_layout(v.board_name, v.board_json, v.board_source),
            oxen=tuple(v.oxen),
            luck_cards=v.luck_cards,
            pro=v.pro,
            stops=tuple(v.stops),
            stop_signs=v.stop_signs,
            action_cards=tuple(v.action_cards),
            hand_sizes=tuple(v.hand_sizes) if v.pro else (0,) * v.players,
            action_pile_size=v.action_pile_size,
            discard=tuple(v.discard),
            opening=(v.opening.tile, v.opening.taken_row) if v.HasField("opening") else None,
        )

    def event_to_wire(self, event: Event, out: game_pb2.MatchEvent) -> None:
        e = out.board
        if isinstance(event, brettspiel_view.TileAttached):
            t = e.tile_attached
            t.seat, t.tile, t.row, t.space, t.effect = event
        elif isinstance(event, brettspiel_view.PointsScored):
            p = e.points_scored
            p.seat, p.points, p.kept, p.total, p.reason = event
        elif isinstance(event, brettspiel_view.TilesRevealed):
            r = e.tiles_revealed
            r.tile_set, r.round = event.tile_set, event.round
            for tile, seat in event.plays:
                r.plays.add(tile=tile, seat=seat)
        elif isinstance(event, brettspiel_view.RowTaken):
            k = e.row_taken
            k.seat, k.row, k.oxen, k.opened = event.seat, event.row, event.oxen, event.opened
            k.tiles.extend(event.tiles)
        elif isinstance(event, brettspiel_view.LuckCardPlayed):
            c = e.luck_card_played
            c.seat, c.card, c.tile = event.seat, event.card, event.tile
            c.targets.extend(event.targets)
        elif isinstance(event, brettspiel_view.LuckCardTaken):
            e.luck_card_taken.seat, e.luck_card_taken.card = event.seat, event.card
        elif isinstance(event, brettspiel_view.TilesDealt):
            e.tiles_dealt.tile_set = event.tile_set
            _rows(e.tiles_dealt.rows, event.rows)
        elif isinstance(event, brettspiel_view.GameEnded):
            e.game_ended.scores.extend(event.scores)
            e.game_ended.ranks.extend(event.ranks)
            e.game_ended.termination = event.termination
        elif type(event) in _FLAT_BOARD_EVENTS:
            message = getattr(e, _FLAT_BOARD_EVENTS[type(event)])
            message.SetInParent()
            for name, value in event._asdict().items():
                if isinstance(value, tuple):
                    getattr(message, name).extend(value)
                else:
                    setattr(message, name, value)
        else:
            raise WireError(f"no wire form for board event {type(event).__name__}")

    def event_from_wire(self, message: game_pb2.MatchEvent) -> Event:
        e = message.board
        which = e.WhichOneof("event")
        if which == "tile_attached":
            t = e.tile_attached
            return brettspiel_view.TileAttached(t.seat, t.tile, t.row, t.space, t.effect)
        if which == "points_scored":
            p = e.points_scored
            return brettspiel_view.PointsScored(p.seat, p.points, p.kept, p.total, p.reason)
        if which == "tiles_revealed":
            r = e.tiles_revealed
            plays = tuple((p.tile, p.seat) for p in r.plays)
            return brettspiel_view.TilesRevealed(r.tile_set, r.round, plays)
        if which == "row_taken":
            k = e.row_taken
            return brettspiel_view.RowTaken(k.seat, k.row, tuple(k.tiles), k.oxen, k.opened)
        if which == "luck_card_played":
            c = e.luck_card_played
            return brettspiel_view.LuckCardPlayed(c.seat, c.card, c.tile, tuple(c.targets))
        if which == "luck_card_taken":
            return brettspiel_view.LuckCardTaken(e.luck_card_taken.seat, e.luck_card_taken.card)
        if which == "tiles_dealt":
            d = e.tiles_dealt
            return brettspiel_view.TilesDealt(d.tile_set, tuple(tuple(r.cards) for r in d.rows))
        if which == "game_ended":
            g = e.game_ended
            return brettspiel_view.GameEnded(tuple(g.scores), tuple(g.ranks), g.termination)
        if which in _FLAT_BOARD_EVENT_OF:
            cls = _FLAT_BOARD_EVENT_OF[which]
            flat = getattr(e, which)
            values = (getattr(flat, name) for name in cls._fields)
            event: Event = cls(*(v if isinstance(v, (int, str)) else tuple(v) for v in values))
            return event
        raise WireError(f"unknown board event {which!r}")


_board_codec = BoardCodec()
CODECS[_board_codec.variant] = _board_codec
_CODEC_BY_FIELD[_board_codec.view_field] = _board_codec
del _board_codec
