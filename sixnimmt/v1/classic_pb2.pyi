from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class Cards(_message.Message):
    __slots__ = ("cards",)
    CARDS_FIELD_NUMBER: _ClassVar[int]
    cards: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, cards: _Optional[_Iterable[int]] = ...) -> None: ...

class ClassicPlay(_message.Message):
    __slots__ = ("card", "seat")
    CARD_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    card: int
    seat: int
    def __init__(self, card: _Optional[int] = ..., seat: _Optional[int] = ...) -> None: ...

class ClassicView(_message.Message):
    __slots__ = ("seat", "players", "phase", "hand_no", "turn", "hand", "rows", "piles", "scores", "revealed", "top_card", "row_capacity", "hand_size", "professional")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    PHASE_FIELD_NUMBER: _ClassVar[int]
    HAND_NO_FIELD_NUMBER: _ClassVar[int]
    TURN_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    ROWS_FIELD_NUMBER: _ClassVar[int]
    PILES_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    REVEALED_FIELD_NUMBER: _ClassVar[int]
    TOP_CARD_FIELD_NUMBER: _ClassVar[int]
    ROW_CAPACITY_FIELD_NUMBER: _ClassVar[int]
    HAND_SIZE_FIELD_NUMBER: _ClassVar[int]
    PROFESSIONAL_FIELD_NUMBER: _ClassVar[int]
    seat: int
    players: int
    phase: str
    hand_no: int
    turn: int
    hand: _containers.RepeatedScalarFieldContainer[int]
    rows: _containers.RepeatedCompositeFieldContainer[Cards]
    piles: _containers.RepeatedCompositeFieldContainer[Cards]
    scores: _containers.RepeatedScalarFieldContainer[int]
    revealed: _containers.RepeatedCompositeFieldContainer[ClassicPlay]
    top_card: int
    row_capacity: int
    hand_size: int
    professional: bool
    def __init__(self, seat: _Optional[int] = ..., players: _Optional[int] = ..., phase: _Optional[str] = ..., hand_no: _Optional[int] = ..., turn: _Optional[int] = ..., hand: _Optional[_Iterable[int]] = ..., rows: _Optional[_Iterable[_Union[Cards, _Mapping]]] = ..., piles: _Optional[_Iterable[_Union[Cards, _Mapping]]] = ..., scores: _Optional[_Iterable[int]] = ..., revealed: _Optional[_Iterable[_Union[ClassicPlay, _Mapping]]] = ..., top_card: _Optional[int] = ..., row_capacity: _Optional[int] = ..., hand_size: _Optional[int] = ..., professional: _Optional[bool] = ...) -> None: ...

class ClassicEvent(_message.Message):
    __slots__ = ("hand_dealt", "cards_revealed", "row_chosen", "card_placed", "hand_scored", "game_ended")
    class HandDealt(_message.Message):
        __slots__ = ("hand", "rows")
        HAND_FIELD_NUMBER: _ClassVar[int]
        ROWS_FIELD_NUMBER: _ClassVar[int]
        hand: int
        rows: _containers.RepeatedCompositeFieldContainer[Cards]
        def __init__(self, hand: _Optional[int] = ..., rows: _Optional[_Iterable[_Union[Cards, _Mapping]]] = ...) -> None: ...
    class CardsRevealed(_message.Message):
        __slots__ = ("hand", "turn", "plays")
        HAND_FIELD_NUMBER: _ClassVar[int]
        TURN_FIELD_NUMBER: _ClassVar[int]
        PLAYS_FIELD_NUMBER: _ClassVar[int]
        hand: int
        turn: int
        plays: _containers.RepeatedCompositeFieldContainer[ClassicPlay]
        def __init__(self, hand: _Optional[int] = ..., turn: _Optional[int] = ..., plays: _Optional[_Iterable[_Union[ClassicPlay, _Mapping]]] = ...) -> None: ...
    class RowChosen(_message.Message):
        __slots__ = ("seat", "card", "row")
        SEAT_FIELD_NUMBER: _ClassVar[int]
        CARD_FIELD_NUMBER: _ClassVar[int]
        ROW_FIELD_NUMBER: _ClassVar[int]
        seat: int
        card: int
        row: int
        def __init__(self, seat: _Optional[int] = ..., card: _Optional[int] = ..., row: _Optional[int] = ...) -> None: ...
    class CardPlaced(_message.Message):
        __slots__ = ("seat", "card", "row", "left", "taken", "bulls")
        SEAT_FIELD_NUMBER: _ClassVar[int]
        CARD_FIELD_NUMBER: _ClassVar[int]
        ROW_FIELD_NUMBER: _ClassVar[int]
        LEFT_FIELD_NUMBER: _ClassVar[int]
        TAKEN_FIELD_NUMBER: _ClassVar[int]
        BULLS_FIELD_NUMBER: _ClassVar[int]
        seat: int
        card: int
        row: int
        left: bool
        taken: _containers.RepeatedScalarFieldContainer[int]
        bulls: int
        def __init__(self, seat: _Optional[int] = ..., card: _Optional[int] = ..., row: _Optional[int] = ..., left: _Optional[bool] = ..., taken: _Optional[_Iterable[int]] = ..., bulls: _Optional[int] = ...) -> None: ...
    class HandScored(_message.Message):
        __slots__ = ("hand", "bulls", "totals")
        HAND_FIELD_NUMBER: _ClassVar[int]
        BULLS_FIELD_NUMBER: _ClassVar[int]
        TOTALS_FIELD_NUMBER: _ClassVar[int]
        hand: int
        bulls: _containers.RepeatedScalarFieldContainer[int]
        totals: _containers.RepeatedScalarFieldContainer[int]
        def __init__(self, hand: _Optional[int] = ..., bulls: _Optional[_Iterable[int]] = ..., totals: _Optional[_Iterable[int]] = ...) -> None: ...
    class GameEnded(_message.Message):
        __slots__ = ("scores", "ranks", "termination")
        SCORES_FIELD_NUMBER: _ClassVar[int]
        RANKS_FIELD_NUMBER: _ClassVar[int]
        TERMINATION_FIELD_NUMBER: _ClassVar[int]
        scores: _containers.RepeatedScalarFieldContainer[int]
        ranks: _containers.RepeatedScalarFieldContainer[int]
        termination: str
        def __init__(self, scores: _Optional[_Iterable[int]] = ..., ranks: _Optional[_Iterable[int]] = ..., termination: _Optional[str] = ...) -> None: ...
    HAND_DEALT_FIELD_NUMBER: _ClassVar[int]
    CARDS_REVEALED_FIELD_NUMBER: _ClassVar[int]
    ROW_CHOSEN_FIELD_NUMBER: _ClassVar[int]
    CARD_PLACED_FIELD_NUMBER: _ClassVar[int]
    HAND_SCORED_FIELD_NUMBER: _ClassVar[int]
    GAME_ENDED_FIELD_NUMBER: _ClassVar[int]
    hand_dealt: ClassicEvent.HandDealt
    cards_revealed: ClassicEvent.CardsRevealed
    row_chosen: ClassicEvent.RowChosen
    card_placed: ClassicEvent.CardPlaced
    hand_scored: ClassicEvent.HandScored
    game_ended: ClassicEvent.GameEnded
    def __init__(self, hand_dealt: _Optional[_Union[ClassicEvent.HandDealt, _Mapping]] = ..., cards_revealed: _Optional[_Union[ClassicEvent.CardsRevealed, _Mapping]] = ..., row_chosen: _Optional[_Union[ClassicEvent.RowChosen, _Mapping]] = ..., card_placed: _Optional[_Union[ClassicEvent.CardPlaced, _Mapping]] = ..., hand_scored: _Optional[_Union[ClassicEvent.HandScored, _Mapping]] = ..., game_ended: _Optional[_Union[ClassicEvent.GameEnded, _Mapping]] = ...) -> None: ...
