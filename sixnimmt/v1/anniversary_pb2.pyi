from sixnimmt.v1 import classic_pb2 as _classic_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class AnniversaryView(_message.Message):
    __slots__ = ("seat", "players", "phase", "round_no", "turn", "hand", "specials", "special_counts", "rows", "blocked", "sevens", "piles", "set_aside", "discard", "deck_size", "scores", "revealed", "placing", "taken", "played", "row_capacity", "hand_size", "max_rows", "specials_per_turn", "top_card")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    PHASE_FIELD_NUMBER: _ClassVar[int]
    ROUND_NO_FIELD_NUMBER: _ClassVar[int]
    TURN_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    SPECIALS_FIELD_NUMBER: _ClassVar[int]
    SPECIAL_COUNTS_FIELD_NUMBER: _ClassVar[int]
    ROWS_FIELD_NUMBER: _ClassVar[int]
    BLOCKED_FIELD_NUMBER: _ClassVar[int]
    SEVENS_FIELD_NUMBER: _ClassVar[int]
    PILES_FIELD_NUMBER: _ClassVar[int]
    SET_ASIDE_FIELD_NUMBER: _ClassVar[int]
    DISCARD_FIELD_NUMBER: _ClassVar[int]
    DECK_SIZE_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    REVEALED_FIELD_NUMBER: _ClassVar[int]
    PLACING_FIELD_NUMBER: _ClassVar[int]
    TAKEN_FIELD_NUMBER: _ClassVar[int]
    PLAYED_FIELD_NUMBER: _ClassVar[int]
    ROW_CAPACITY_FIELD_NUMBER: _ClassVar[int]
    HAND_SIZE_FIELD_NUMBER: _ClassVar[int]
    MAX_ROWS_FIELD_NUMBER: _ClassVar[int]
    SPECIALS_PER_TURN_FIELD_NUMBER: _ClassVar[int]
    TOP_CARD_FIELD_NUMBER: _ClassVar[int]
    seat: int
    players: int
    phase: str
    round_no: int
    turn: int
    hand: _containers.RepeatedScalarFieldContainer[int]
    specials: _containers.RepeatedScalarFieldContainer[int]
    special_counts: _containers.RepeatedScalarFieldContainer[int]
    rows: _containers.RepeatedCompositeFieldContainer[_classic_pb2.Cards]
    blocked: _containers.RepeatedScalarFieldContainer[bool]
    sevens: _containers.RepeatedScalarFieldContainer[bool]
    piles: _containers.RepeatedCompositeFieldContainer[_classic_pb2.Cards]
    set_aside: _containers.RepeatedScalarFieldContainer[int]
    discard: _containers.RepeatedScalarFieldContainer[int]
    deck_size: int
    scores: _containers.RepeatedScalarFieldContainer[int]
    revealed: _containers.RepeatedCompositeFieldContainer[_classic_pb2.ClassicPlay]
    placing: _classic_pb2.ClassicPlay
    taken: _containers.RepeatedScalarFieldContainer[int]
    played: _containers.RepeatedScalarFieldContainer[int]
    row_capacity: int
    hand_size: int
    max_rows: int
    specials_per_turn: int
    top_card: int
    def __init__(self, seat: _Optional[int] = ..., players: _Optional[int] = ..., phase: _Optional[str] = ..., round_no: _Optional[int] = ..., turn: _Optional[int] = ..., hand: _Optional[_Iterable[int]] = ..., specials: _Optional[_Iterable[int]] = ..., special_counts: _Optional[_Iterable[int]] = ..., rows: _Optional[_Iterable[_Union[_classic_pb2.Cards, _Mapping]]] = ..., blocked: _Optional[_Iterable[bool]] = ..., sevens: _Optional[_Iterable[bool]] = ..., piles: _Optional[_Iterable[_Union[_classic_pb2.Cards, _Mapping]]] = ..., set_aside: _Optional[_Iterable[int]] = ..., discard: _Optional[_Iterable[int]] = ..., deck_size: _Optional[int] = ..., scores: _Optional[_Iterable[int]] = ..., revealed: _Optional[_Iterable[_Union[_classic_pb2.ClassicPlay, _Mapping]]] = ..., placing: _Optional[_Union[_classic_pb2.ClassicPlay, _Mapping]] = ..., taken: _Optional[_Iterable[int]] = ..., played: _Optional[_Iterable[int]] = ..., row_capacity: _Optional[int] = ..., hand_size: _Optional[int] = ..., max_rows: _Optional[int] = ..., specials_per_turn: _Optional[int] = ..., top_card: _Optional[int] = ...) -> None: ...

class AnniversaryEvent(_message.Message):
    __slots__ = ("round_dealt", "cards_revealed", "special_played", "card_shifted", "row_chosen", "card_placed", "blocks_removed", "cards_set_aside", "special_swapped", "specials_reshuffled", "special_drawn", "round_scored", "game_ended")
    class RoundDealt(_message.Message):
        __slots__ = ("round", "rows", "specials")
        ROUND_FIELD_NUMBER: _ClassVar[int]
        ROWS_FIELD_NUMBER: _ClassVar[int]
        SPECIALS_FIELD_NUMBER: _ClassVar[int]
        round: int
        rows: _containers.RepeatedCompositeFieldContainer[_classic_pb2.Cards]
        specials: _containers.RepeatedScalarFieldContainer[int]
        def __init__(self, round: _Optional[int] = ..., rows: _Optional[_Iterable[_Union[_classic_pb2.Cards, _Mapping]]] = ..., specials: _Optional[_Iterable[int]] = ...) -> None: ...
    class CardsRevealed(_message.Message):
        __slots__ = ("round", "turn", "plays")
        ROUND_FIELD_NUMBER: _ClassVar[int]
        TURN_FIELD_NUMBER: _ClassVar[int]
        PLAYS_FIELD_NUMBER: _ClassVar[int]
        round: int
        turn: int
        plays: _containers.RepeatedCompositeFieldContainer[_classic_pb2.ClassicPlay]
        def __init__(self, round: _Optional[int] = ..., turn: _Optional[int] = ..., plays: _Optional[_Iterable[_Union[_classic_pb2.ClassicPlay, _Mapping]]] = ...) -> None: ...
    class SpecialPlayed(_message.Message):
        __slots__ = ("seat", "kind", "targets")
        SEAT_FIELD_NUMBER: _ClassVar[int]
        KIND_FIELD_NUMBER: _ClassVar[int]
        TARGETS_FIELD_NUMBER: _ClassVar[int]
        seat: int
        kind: int
        targets: _containers.RepeatedScalarFieldContainer[int]
        def __init__(self, seat: _Optional[int] = ..., kind: _Optional[int] = ..., targets: _Optional[_Iterable[int]] = ...) -> None: ...
    class CardShifted(_message.Message):
        __slots__ = ("card", "from_row", "row", "position")
        CARD_FIELD_NUMBER: _ClassVar[int]
        FROM_ROW_FIELD_NUMBER: _ClassVar[int]
        ROW_FIELD_NUMBER: _ClassVar[int]
        POSITION_FIELD_NUMBER: _ClassVar[int]
        card: int
        from_row: int
        row: int
        position: int
        def __init__(self, card: _Optional[int] = ..., from_row: _Optional[int] = ..., row: _Optional[int] = ..., position: _Optional[int] = ...) -> None: ...
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
        __slots__ = ("seat", "card", "row", "position", "taken", "bulls", "closed")
        SEAT_FIELD_NUMBER: _ClassVar[int]
        CARD_FIELD_NUMBER: _ClassVar[int]
        ROW_FIELD_NUMBER: _ClassVar[int]
        POSITION_FIELD_NUMBER: _ClassVar[int]
        TAKEN_FIELD_NUMBER: _ClassVar[int]
        BULLS_FIELD_NUMBER: _ClassVar[int]
        CLOSED_FIELD_NUMBER: _ClassVar[int]
        seat: int
        card: int
        row: int
        position: int
        taken: _containers.RepeatedScalarFieldContainer[int]
        bulls: int
        closed: bool
        def __init__(self, seat: _Optional[int] = ..., card: _Optional[int] = ..., row: _Optional[int] = ..., position: _Optional[int] = ..., taken: _Optional[_Iterable[int]] = ..., bulls: _Optional[int] = ..., closed: _Optional[bool] = ...) -> None: ...
    class BlocksRemoved(_message.Message):
        __slots__ = ("rows",)
        ROWS_FIELD_NUMBER: _ClassVar[int]
        rows: _containers.RepeatedScalarFieldContainer[int]
        def __init__(self, rows: _Optional[_Iterable[int]] = ...) -> None: ...
    class CardsSetAside(_message.Message):
        __slots__ = ("seat", "card", "cards", "bulls")
        SEAT_FIELD_NUMBER: _ClassVar[int]
        CARD_FIELD_NUMBER: _ClassVar[int]
        CARDS_FIELD_NUMBER: _ClassVar[int]
        BULLS_FIELD_NUMBER: _ClassVar[int]
        seat: int
        card: int
        cards: _containers.RepeatedScalarFieldContainer[int]
        bulls: int
        def __init__(self, seat: _Optional[int] = ..., card: _Optional[int] = ..., cards: _Optional[_Iterable[int]] = ..., bulls: _Optional[int] = ...) -> None: ...
    class SpecialSwapped(_message.Message):
        __slots__ = ("seat", "kind")
        SEAT_FIELD_NUMBER: _ClassVar[int]
        KIND_FIELD_NUMBER: _ClassVar[int]
        seat: int
        kind: int
        def __init__(self, seat: _Optional[int] = ..., kind: _Optional[int] = ...) -> None: ...
    class SpecialsReshuffled(_message.Message):
        __slots__ = ("cards",)
        CARDS_FIELD_NUMBER: _ClassVar[int]
        cards: int
        def __init__(self, cards: _Optional[int] = ...) -> None: ...
    class SpecialDrawn(_message.Message):
        __slots__ = ("seat",)
        SEAT_FIELD_NUMBER: _ClassVar[int]
        seat: int
        def __init__(self, seat: _Optional[int] = ...) -> None: ...
    class RoundScored(_message.Message):
        __slots__ = ("round", "bulls", "totals")
        ROUND_FIELD_NUMBER: _ClassVar[int]
        BULLS_FIELD_NUMBER: _ClassVar[int]
        TOTALS_FIELD_NUMBER: _ClassVar[int]
        round: int
        bulls: _containers.RepeatedScalarFieldContainer[int]
        totals: _containers.RepeatedScalarFieldContainer[int]
        def __init__(self, round: _Optional[int] = ..., bulls: _Optional[_Iterable[int]] = ..., totals: _Optional[_Iterable[int]] = ...) -> None: ...
    class GameEnded(_message.Message):
        __slots__ = ("scores", "ranks", "termination")
        SCORES_FIELD_NUMBER: _ClassVar[int]
        RANKS_FIELD_NUMBER: _ClassVar[int]
        TERMINATION_FIELD_NUMBER: _ClassVar[int]
        scores: _containers.RepeatedScalarFieldContainer[int]
        ranks: _containers.RepeatedScalarFieldContainer[int]
        termination: str
        def __init__(self, scores: _Optional[_Iterable[int]] = ..., ranks: _Optional[_Iterable[int]] = ..., termination: _Optional[str] = ...) -> None: ...
    ROUND_DEALT_FIELD_NUMBER: _ClassVar[int]
    CARDS_REVEALED_FIELD_NUMBER: _ClassVar[int]
    SPECIAL_PLAYED_FIELD_NUMBER: _ClassVar[int]
    CARD_SHIFTED_FIELD_NUMBER: _ClassVar[int]
    ROW_CHOSEN_FIELD_NUMBER: _ClassVar[int]
    CARD_PLACED_FIELD_NUMBER: _ClassVar[int]
    BLOCKS_REMOVED_FIELD_NUMBER: _ClassVar[int]
    CARDS_SET_ASIDE_FIELD_NUMBER: _ClassVar[int]
    SPECIAL_SWAPPED_FIELD_NUMBER: _ClassVar[int]
    SPECIALS_RESHUFFLED_FIELD_NUMBER: _ClassVar[int]
    SPECIAL_DRAWN_FIELD_NUMBER: _ClassVar[int]
    ROUND_SCORED_FIELD_NUMBER: _ClassVar[int]
    GAME_ENDED_FIELD_NUMBER: _ClassVar[int]
    round_dealt: AnniversaryEvent.RoundDealt
    cards_revealed: AnniversaryEvent.CardsRevealed
    special_played: AnniversaryEvent.SpecialPlayed
    card_shifted: AnniversaryEvent.CardShifted
    row_chosen: AnniversaryEvent.RowChosen
    card_placed: AnniversaryEvent.CardPlaced
    blocks_removed: AnniversaryEvent.BlocksRemoved
    cards_set_aside: AnniversaryEvent.CardsSetAside
    special_swapped: AnniversaryEvent.SpecialSwapped
    specials_reshuffled: AnniversaryEvent.SpecialsReshuffled
    special_drawn: AnniversaryEvent.SpecialDrawn
    round_scored: AnniversaryEvent.RoundScored
    game_ended: AnniversaryEvent.GameEnded
    def __init__(self, round_dealt: _Optional[_Union[AnniversaryEvent.RoundDealt, _Mapping]] = ..., cards_revealed: _Optional[_Union[AnniversaryEvent.CardsRevealed, _Mapping]] = ..., special_played: _Optional[_Union[AnniversaryEvent.SpecialPlayed, _Mapping]] = ..., card_shifted: _Optional[_Union[AnniversaryEvent.CardShifted, _Mapping]] = ..., row_chosen: _Optional[_Union[AnniversaryEvent.RowChosen, _Mapping]] = ..., card_placed: _Optional[_Union[AnniversaryEvent.CardPlaced, _Mapping]] = ..., blocks_removed: _Optional[_Union[AnniversaryEvent.BlocksRemoved, _Mapping]] = ..., cards_set_aside: _Optional[_Union[AnniversaryEvent.CardsSetAside, _Mapping]] = ..., special_swapped: _Optional[_Union[AnniversaryEvent.SpecialSwapped, _Mapping]] = ..., specials_reshuffled: _Optional[_Union[AnniversaryEvent.SpecialsReshuffled, _Mapping]] = ..., special_drawn: _Optional[_Union[AnniversaryEvent.SpecialDrawn, _Mapping]] = ..., round_scored: _Optional[_Union[AnniversaryEvent.RoundScored, _Mapping]] = ..., game_ended: _Optional[_Union[AnniversaryEvent.GameEnded, _Mapping]] = ...) -> None: ...
