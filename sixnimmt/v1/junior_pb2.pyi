from sixnimmt.v1 import classic_pb2 as _classic_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class JuniorView(_message.Message):
    __slots__ = ("seat", "players", "mode", "phase", "turn", "to_move", "rows", "hand", "hand_sizes", "collected", "pile_size", "card", "fewest_wins", "row_limit", "deck_name", "deck_json")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    MODE_FIELD_NUMBER: _ClassVar[int]
    PHASE_FIELD_NUMBER: _ClassVar[int]
    TURN_FIELD_NUMBER: _ClassVar[int]
    TO_MOVE_FIELD_NUMBER: _ClassVar[int]
    ROWS_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    HAND_SIZES_FIELD_NUMBER: _ClassVar[int]
    COLLECTED_FIELD_NUMBER: _ClassVar[int]
    PILE_SIZE_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    FEWEST_WINS_FIELD_NUMBER: _ClassVar[int]
    ROW_LIMIT_FIELD_NUMBER: _ClassVar[int]
    DECK_NAME_FIELD_NUMBER: _ClassVar[int]
    DECK_JSON_FIELD_NUMBER: _ClassVar[int]
    seat: int
    players: int
    mode: str
    phase: str
    turn: int
    to_move: int
    rows: _containers.RepeatedCompositeFieldContainer[_classic_pb2.Cards]
    hand: _containers.RepeatedScalarFieldContainer[int]
    hand_sizes: _containers.RepeatedScalarFieldContainer[int]
    collected: _containers.RepeatedCompositeFieldContainer[_classic_pb2.Cards]
    pile_size: int
    card: int
    fewest_wins: bool
    row_limit: int
    deck_name: str
    deck_json: str
    def __init__(self, seat: _Optional[int] = ..., players: _Optional[int] = ..., mode: _Optional[str] = ..., phase: _Optional[str] = ..., turn: _Optional[int] = ..., to_move: _Optional[int] = ..., rows: _Optional[_Iterable[_Union[_classic_pb2.Cards, _Mapping]]] = ..., hand: _Optional[_Iterable[int]] = ..., hand_sizes: _Optional[_Iterable[int]] = ..., collected: _Optional[_Iterable[_Union[_classic_pb2.Cards, _Mapping]]] = ..., pile_size: _Optional[int] = ..., card: _Optional[int] = ..., fewest_wins: _Optional[bool] = ..., row_limit: _Optional[int] = ..., deck_name: _Optional[str] = ..., deck_json: _Optional[str] = ...) -> None: ...

class JuniorEvent(_message.Message):
    __slots__ = ("cards_dealt", "card_turned", "card_drawn", "card_played", "card_placed", "row_collected", "game_ended")
    class CardsDealt(_message.Message):
        __slots__ = ("hand_size", "rows")
        HAND_SIZE_FIELD_NUMBER: _ClassVar[int]
        ROWS_FIELD_NUMBER: _ClassVar[int]
        hand_size: int
        rows: _containers.RepeatedCompositeFieldContainer[_classic_pb2.Cards]
        def __init__(self, hand_size: _Optional[int] = ..., rows: _Optional[_Iterable[_Union[_classic_pb2.Cards, _Mapping]]] = ...) -> None: ...
    class CardTurned(_message.Message):
        __slots__ = ("seat", "card")
        SEAT_FIELD_NUMBER: _ClassVar[int]
        CARD_FIELD_NUMBER: _ClassVar[int]
        seat: int
        card: int
        def __init__(self, seat: _Optional[int] = ..., card: _Optional[int] = ...) -> None: ...
    class CardDrawn(_message.Message):
        __slots__ = ("seat", "pile")
        SEAT_FIELD_NUMBER: _ClassVar[int]
        PILE_FIELD_NUMBER: _ClassVar[int]
        seat: int
        pile: int
        def __init__(self, seat: _Optional[int] = ..., pile: _Optional[int] = ...) -> None: ...
    class CardPlayed(_message.Message):
        __slots__ = ("seat", "card")
        SEAT_FIELD_NUMBER: _ClassVar[int]
        CARD_FIELD_NUMBER: _ClassVar[int]
        seat: int
        card: int
        def __init__(self, seat: _Optional[int] = ..., card: _Optional[int] = ...) -> None: ...
    class CardPlaced(_message.Message):
        __slots__ = ("seat", "card", "row")
        SEAT_FIELD_NUMBER: _ClassVar[int]
        CARD_FIELD_NUMBER: _ClassVar[int]
        ROW_FIELD_NUMBER: _ClassVar[int]
        seat: int
        card: int
        row: int
        def __init__(self, seat: _Optional[int] = ..., card: _Optional[int] = ..., row: _Optional[int] = ...) -> None: ...
    class RowCollected(_message.Message):
        __slots__ = ("seat", "row", "cards", "total")
        SEAT_FIELD_NUMBER: _ClassVar[int]
        ROW_FIELD_NUMBER: _ClassVar[int]
        CARDS_FIELD_NUMBER: _ClassVar[int]
        TOTAL_FIELD_NUMBER: _ClassVar[int]
        seat: int
        row: int
        cards: _containers.RepeatedScalarFieldContainer[int]
        total: int
        def __init__(self, seat: _Optional[int] = ..., row: _Optional[int] = ..., cards: _Optional[_Iterable[int]] = ..., total: _Optional[int] = ...) -> None: ...
    class GameEnded(_message.Message):
        __slots__ = ("scores", "ranks", "termination")
        SCORES_FIELD_NUMBER: _ClassVar[int]
        RANKS_FIELD_NUMBER: _ClassVar[int]
        TERMINATION_FIELD_NUMBER: _ClassVar[int]
        scores: _containers.RepeatedScalarFieldContainer[int]
        ranks: _containers.RepeatedScalarFieldContainer[int]
        termination: str
        def __init__(self, scores: _Optional[_Iterable[int]] = ..., ranks: _Optional[_Iterable[int]] = ..., termination: _Optional[str] = ...) -> None: ...
    CARDS_DEALT_FIELD_NUMBER: _ClassVar[int]
    CARD_TURNED_FIELD_NUMBER: _ClassVar[int]
    CARD_DRAWN_FIELD_NUMBER: _ClassVar[int]
    CARD_PLAYED_FIELD_NUMBER: _ClassVar[int]
    CARD_PLACED_FIELD_NUMBER: _ClassVar[int]
    ROW_COLLECTED_FIELD_NUMBER: _ClassVar[int]
    GAME_ENDED_FIELD_NUMBER: _ClassVar[int]
    cards_dealt: JuniorEvent.CardsDealt
    card_turned: JuniorEvent.CardTurned
    card_drawn: JuniorEvent.CardDrawn
    card_played: JuniorEvent.CardPlayed
    card_placed: JuniorEvent.CardPlaced
    row_collected: JuniorEvent.RowCollected
    game_ended: JuniorEvent.GameEnded
    def __init__(self, cards_dealt: _Optional[_Union[JuniorEvent.CardsDealt, _Mapping]] = ..., card_turned: _Optional[_Union[JuniorEvent.CardTurned, _Mapping]] = ..., card_drawn: _Optional[_Union[JuniorEvent.CardDrawn, _Mapping]] = ..., card_played: _Optional[_Union[JuniorEvent.CardPlayed, _Mapping]] = ..., card_placed: _Optional[_Union[JuniorEvent.CardPlaced, _Mapping]] = ..., row_collected: _Optional[_Union[JuniorEvent.RowCollected, _Mapping]] = ..., game_ended: _Optional[_Union[JuniorEvent.GameEnded, _Mapping]] = ...) -> None: ...
