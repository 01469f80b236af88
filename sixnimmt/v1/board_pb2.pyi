from sixnimmt.v1 import classic_pb2 as _classic_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class BoardPlay(_message.Message):
    __slots__ = ("tile", "seat")
    TILE_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    tile: int
    seat: int
    def __init__(self, tile: _Optional[int] = ..., seat: _Optional[int] = ...) -> None: ...

class BoardLuck(_message.Message):
    __slots__ = ("plus_points", "positive_oxen")
    PLUS_POINTS_FIELD_NUMBER: _ClassVar[int]
    POSITIVE_OXEN_FIELD_NUMBER: _ClassVar[int]
    plus_points: int
    positive_oxen: int
    def __init__(self, plus_points: _Optional[int] = ..., positive_oxen: _Optional[int] = ...) -> None: ...

class BoardTarget(_message.Message):
    __slots__ = ("tile", "row", "space")
    TILE_FIELD_NUMBER: _ClassVar[int]
    ROW_FIELD_NUMBER: _ClassVar[int]
    SPACE_FIELD_NUMBER: _ClassVar[int]
    tile: int
    row: int
    space: int
    def __init__(self, tile: _Optional[int] = ..., row: _Optional[int] = ..., space: _Optional[int] = ...) -> None: ...

class BoardOpening(_message.Message):
    __slots__ = ("tile", "taken_row")
    TILE_FIELD_NUMBER: _ClassVar[int]
    TAKEN_ROW_FIELD_NUMBER: _ClassVar[int]
    tile: int
    taken_row: int
    def __init__(self, tile: _Optional[int] = ..., taken_row: _Optional[int] = ...) -> None: ...

class BoardView(_message.Message):
    __slots__ = ("seat", "players", "phase", "tile_set", "tile_sets", "tiles_each", "round", "screen", "screen_sizes", "rows", "scores", "luck", "piles", "revealed", "attached", "boxed", "supply_size", "play_count", "attaching", "draws", "luck_cards", "oxen", "board_name", "board_json", "board_source", "pro", "stops", "stop_signs", "action_cards", "hand_sizes", "action_pile_size", "discard", "opening")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    PHASE_FIELD_NUMBER: _ClassVar[int]
    TILE_SET_FIELD_NUMBER: _ClassVar[int]
    TILE_SETS_FIELD_NUMBER: _ClassVar[int]
    TILES_EACH_FIELD_NUMBER: _ClassVar[int]
    ROUND_FIELD_NUMBER: _ClassVar[int]
    SCREEN_FIELD_NUMBER: _ClassVar[int]
    SCREEN_SIZES_FIELD_NUMBER: _ClassVar[int]
    ROWS_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    LUCK_FIELD_NUMBER: _ClassVar[int]
    PILES_FIELD_NUMBER: _ClassVar[int]
    REVEALED_FIELD_NUMBER: _ClassVar[int]
    ATTACHED_FIELD_NUMBER: _ClassVar[int]
    BOXED_FIELD_NUMBER: _ClassVar[int]
    SUPPLY_SIZE_FIELD_NUMBER: _ClassVar[int]
    PLAY_COUNT_FIELD_NUMBER: _ClassVar[int]
    ATTACHING_FIELD_NUMBER: _ClassVar[int]
    DRAWS_FIELD_NUMBER: _ClassVar[int]
    LUCK_CARDS_FIELD_NUMBER: _ClassVar[int]
    OXEN_FIELD_NUMBER: _ClassVar[int]
    BOARD_NAME_FIELD_NUMBER: _ClassVar[int]
    BOARD_JSON_FIELD_NUMBER: _ClassVar[int]
    BOARD_SOURCE_FIELD_NUMBER: _ClassVar[int]
    PRO_FIELD_NUMBER: _ClassVar[int]
    STOPS_FIELD_NUMBER: _ClassVar[int]
    STOP_SIGNS_FIELD_NUMBER: _ClassVar[int]
    ACTION_CARDS_FIELD_NUMBER: _ClassVar[int]
    HAND_SIZES_FIELD_NUMBER: _ClassVar[int]
    ACTION_PILE_SIZE_FIELD_NUMBER: _ClassVar[int]
    DISCARD_FIELD_NUMBER: _ClassVar[int]
    OPENING_FIELD_NUMBER: _ClassVar[int]
    seat: int
    players: int
    phase: str
    tile_set: int
    tile_sets: int
    tiles_each: int
    round: int
    screen: _containers.RepeatedScalarFieldContainer[int]
    screen_sizes: _containers.RepeatedScalarFieldContainer[int]
    rows: _containers.RepeatedCompositeFieldContainer[_classic_pb2.Cards]
    scores: _containers.RepeatedScalarFieldContainer[int]
    luck: _containers.RepeatedCompositeFieldContainer[BoardLuck]
    piles: BoardLuck
    revealed: _containers.RepeatedCompositeFieldContainer[BoardPlay]
    attached: int
    boxed: _containers.RepeatedScalarFieldContainer[int]
    supply_size: int
    play_count: int
    attaching: BoardTarget
    draws: int
    luck_cards: bool
    oxen: _containers.RepeatedScalarFieldContainer[int]
    board_name: str
    board_json: str
    board_source: str
    pro: bool
    stops: _containers.RepeatedScalarFieldContainer[int]
    stop_signs: int
    action_cards: _containers.RepeatedScalarFieldContainer[int]
    hand_sizes: _containers.RepeatedScalarFieldContainer[int]
    action_pile_size: int
    discard: _containers.RepeatedScalarFieldContainer[int]
    opening: BoardOpening
    def __init__(self, seat: _Optional[int] = ..., players: _Optional[int] = ..., phase: _Optional[str] = ..., tile_set: _Optional[int] = ..., tile_sets: _Optional[int] = ..., tiles_each: _Optional[int] = ..., round: _Optional[int] = ..., screen: _Optional[_Iterable[int]] = ..., screen_sizes: _Optional[_Iterable[int]] = ..., rows: _Optional[_Iterable[_Union[_classic_pb2.Cards, _Mapping]]] = ..., scores: _Optional[_Iterable[int]] = ..., luck: _Optional[_Iterable[_Union[BoardLuck, _Mapping]]] = ..., piles: _Optional[_Union[BoardLuck, _Mapping]] = ..., revealed: _Optional[_Iterable[_Union[BoardPlay, _Mapping]]] = ..., attached: _Optional[int] = ..., boxed: _Optional[_Iterable[int]] = ..., supply_size: _Optional[int] = ..., play_count: _Optional[int] = ..., attaching: _Optional[_Union[BoardTarget, _Mapping]] = ..., draws: _Optional[int] = ..., luck_cards: _Optional[bool] = ..., oxen: _Optional[_Iterable[int]] = ..., board_name: _Optional[str] = ..., board_json: _Optional[str] = ..., board_source: _Optional[str] = ..., pro: _Optional[bool] = ..., stops: _Optional[_Iterable[int]] = ..., stop_signs: _Optional[int] = ..., action_cards: _Optional[_Iterable[int]] = ..., hand_sizes: _Optional[_Iterable[int]] = ..., action_pile_size: _Optional[int] = ..., discard: _Optional[_Iterable[int]] = ..., opening: _Optional[_Union[BoardOpening, _Mapping]] = ...) -> None: ...

class BoardEvent(_message.Message):
    __slots__ = ("tiles_dealt", "tiles_revealed", "luck_card_played", "tile_attached", "row_taken", "points_scored", "luck_card_taken", "game_ended", "row_opened", "row_shifted", "action_cards_dealt", "action_card_played", "stop_signs_removed", "tile_drawn", "action_card_drawn", "action_cards_reshuffled")
    class TilesDealt(_message.Message):
        __slots__ = ("tile_set", "rows")
        TILE_SET_FIELD_NUMBER: _ClassVar[int]
        ROWS_FIELD_NUMBER: _ClassVar[int]
        tile_set: int
        rows: _containers.RepeatedCompositeFieldContainer[_classic_pb2.Cards]
        def __init__(self, tile_set: _Optional[int] = ..., rows: _Optional[_Iterable[_Union[_classic_pb2.Cards, _Mapping]]] = ...) -> None: ...
    class TilesRevealed(_message.Message):
        __slots__ = ("tile_set", "round", "plays")
        TILE_SET_FIELD_NUMBER: _ClassVar[int]
        ROUND_FIELD_NUMBER: _ClassVar[int]
        PLAYS_FIELD_NUMBER: _ClassVar[int]
        tile_set: int
        round: int
        plays: _containers.RepeatedCompositeFieldContainer[BoardPlay]
        def __init__(self, tile_set: _Optional[int] = ..., round: _Optional[int] = ..., plays: _Optional[_Iterable[_Union[BoardPlay, _Mapping]]] = ...) -> None: ...
    class LuckCardPlayed(_message.Message):
        __slots__ = ("seat", "card", "tile", "targets")
        SEAT_FIELD_NUMBER: _ClassVar[int]
        CARD_FIELD_NUMBER: _ClassVar[int]
        TILE_FIELD_NUMBER: _ClassVar[int]
        TARGETS_FIELD_NUMBER: _ClassVar[int]
        seat: int
        card: int
        tile: int
        targets: _containers.RepeatedScalarFieldContainer[int]
        def __init__(self, seat: _Optional[int] = ..., card: _Optional[int] = ..., tile: _Optional[int] = ..., targets: _Optional[_Iterable[int]] = ...) -> None: ...
    class TileAttached(_message.Message):
        __slots__ = ("seat", "tile", "row", "space", "effect")
        SEAT_FIELD_NUMBER: _ClassVar[int]
        TILE_FIELD_NUMBER: _ClassVar[int]
        ROW_FIELD_NUMBER: _ClassVar[int]
        SPACE_FIELD_NUMBER: _ClassVar[int]
        EFFECT_FIELD_NUMBER: _ClassVar[int]
        seat: int
        tile: int
        row: int
        space: int
        effect: str
        def __init__(self, seat: _Optional[int] = ..., tile: _Optional[int] = ..., row: _Optional[int] = ..., space: _Optional[int] = ..., effect: _Optional[str] = ...) -> None: ...
    class RowTaken(_message.Message):
        __slots__ = ("seat", "row", "tiles", "oxen", "opened")
        SEAT_FIELD_NUMBER: _ClassVar[int]
        ROW_FIELD_NUMBER: _ClassVar[int]
        TILES_FIELD_NUMBER: _ClassVar[int]
        OXEN_FIELD_NUMBER: _ClassVar[int]
        OPENED_FIELD_NUMBER: _ClassVar[int]
        seat: int
        row: int
        tiles: _containers.RepeatedScalarFieldContainer[int]
        oxen: int
        opened: int
        def __init__(self, seat: _Optional[int] = ..., row: _Optional[int] = ..., tiles: _Optional[_Iterable[int]] = ..., oxen: _Optional[int] = ..., opened: _Optional[int] = ...) -> None: ...
    class PointsScored(_message.Message):
        __slots__ = ("seat", "points", "kept", "total", "reason")
        SEAT_FIELD_NUMBER: _ClassVar[int]
        POINTS_FIELD_NUMBER: _ClassVar[int]
        KEPT_FIELD_NUMBER: _ClassVar[int]
        TOTAL_FIELD_NUMBER: _ClassVar[int]
        REASON_FIELD_NUMBER: _ClassVar[int]
        seat: int
        points: int
        kept: int
        total: int
        reason: str
        def __init__(self, seat: _Optional[int] = ..., points: _Optional[int] = ..., kept: _Optional[int] = ..., total: _Optional[int] = ..., reason: _Optional[str] = ...) -> None: ...
    class LuckCardTaken(_message.Message):
        __slots__ = ("seat", "card")
        SEAT_FIELD_NUMBER: _ClassVar[int]
        CARD_FIELD_NUMBER: _ClassVar[int]
        seat: int
        card: int
        def __init__(self, seat: _Optional[int] = ..., card: _Optional[int] = ...) -> None: ...
    class GameEnded(_message.Message):
        __slots__ = ("scores", "ranks", "termination")
        SCORES_FIELD_NUMBER: _ClassVar[int]
        RANKS_FIELD_NUMBER: _ClassVar[int]
        TERMINATION_FIELD_NUMBER: _ClassVar[int]
        scores: _containers.RepeatedScalarFieldContainer[int]
        ranks: _containers.RepeatedScalarFieldContainer[int]
        termination: str
        def __init__(self, scores: _Optional[_Iterable[int]] = ..., ranks: _Optional[_Iterable[int]] = ..., termination: _Optional[str] = ...) -> None: ...
    class RowOpened(_message.Message):
        __slots__ = ("seat", "tile", "row", "effect")
        SEAT_FIELD_NUMBER: _ClassVar[int]
        TILE_FIELD_NUMBER: _ClassVar[int]
        ROW_FIELD_NUMBER: _ClassVar[int]
        EFFECT_FIELD_NUMBER: _ClassVar[int]
        seat: int
        tile: int
        row: int
        effect: str
        def __init__(self, seat: _Optional[int] = ..., tile: _Optional[int] = ..., row: _Optional[int] = ..., effect: _Optional[str] = ...) -> None: ...
    class RowShifted(_message.Message):
        __slots__ = ("seat", "tile", "row", "space", "effect")
        SEAT_FIELD_NUMBER: _ClassVar[int]
        TILE_FIELD_NUMBER: _ClassVar[int]
        ROW_FIELD_NUMBER: _ClassVar[int]
        SPACE_FIELD_NUMBER: _ClassVar[int]
        EFFECT_FIELD_NUMBER: _ClassVar[int]
        seat: int
        tile: int
        row: int
        space: int
        effect: str
        def __init__(self, seat: _Optional[int] = ..., tile: _Optional[int] = ..., row: _Optional[int] = ..., space: _Optional[int] = ..., effect: _Optional[str] = ...) -> None: ...
    class ActionCardsDealt(_message.Message):
        __slots__ = ("each", "pile")
        EACH_FIELD_NUMBER: _ClassVar[int]
        PILE_FIELD_NUMBER: _ClassVar[int]
        each: int
        pile: int
        def __init__(self, each: _Optional[int] = ..., pile: _Optional[int] = ...) -> None: ...
    class ActionCardPlayed(_message.Message):
        __slots__ = ("seat", "card", "tile", "targets")
        SEAT_FIELD_NUMBER: _ClassVar[int]
        CARD_FIELD_NUMBER: _ClassVar[int]
        TILE_FIELD_NUMBER: _ClassVar[int]
        TARGETS_FIELD_NUMBER: _ClassVar[int]
        seat: int
        card: int
        tile: int
        targets: _containers.RepeatedScalarFieldContainer[int]
        def __init__(self, seat: _Optional[int] = ..., card: _Optional[int] = ..., tile: _Optional[int] = ..., targets: _Optional[_Iterable[int]] = ...) -> None: ...
    class StopSignsRemoved(_message.Message):
        __slots__ = ("rows",)
        ROWS_FIELD_NUMBER: _ClassVar[int]
        rows: _containers.RepeatedScalarFieldContainer[int]
        def __init__(self, rows: _Optional[_Iterable[int]] = ...) -> None: ...
    class TileDrawn(_message.Message):
        __slots__ = ("seat",)
        SEAT_FIELD_NUMBER: _ClassVar[int]
        seat: int
        def __init__(self, seat: _Optional[int] = ...) -> None: ...
    class ActionCardDrawn(_message.Message):
        __slots__ = ("seat",)
        SEAT_FIELD_NUMBER: _ClassVar[int]
        seat: int
        def __init__(self, seat: _Optional[int] = ...) -> None: ...
    class ActionCardsReshuffled(_message.Message):
        __slots__ = ("cards",)
        CARDS_FIELD_NUMBER: _ClassVar[int]
        cards: int
        def __init__(self, cards: _Optional[int] = ...) -> None: ...
    TILES_DEALT_FIELD_NUMBER: _ClassVar[int]
    TILES_REVEALED_FIELD_NUMBER: _ClassVar[int]
    LUCK_CARD_PLAYED_FIELD_NUMBER: _ClassVar[int]
    TILE_ATTACHED_FIELD_NUMBER: _ClassVar[int]
    ROW_TAKEN_FIELD_NUMBER: _ClassVar[int]
    POINTS_SCORED_FIELD_NUMBER: _ClassVar[int]
    LUCK_CARD_TAKEN_FIELD_NUMBER: _ClassVar[int]
    GAME_ENDED_FIELD_NUMBER: _ClassVar[int]
    ROW_OPENED_FIELD_NUMBER: _ClassVar[int]
    ROW_SHIFTED_FIELD_NUMBER: _ClassVar[int]
    ACTION_CARDS_DEALT_FIELD_NUMBER: _ClassVar[int]
    ACTION_CARD_PLAYED_FIELD_NUMBER: _ClassVar[int]
    STOP_SIGNS_REMOVED_FIELD_NUMBER: _ClassVar[int]
    TILE_DRAWN_FIELD_NUMBER: _ClassVar[int]
    ACTION_CARD_DRAWN_FIELD_NUMBER: _ClassVar[int]
    ACTION_CARDS_RESHUFFLED_FIELD_NUMBER: _ClassVar[int]
    tiles_dealt: BoardEvent.TilesDealt
    tiles_revealed: BoardEvent.TilesRevealed
    luck_card_played: BoardEvent.LuckCardPlayed
    tile_attached: BoardEvent.TileAttached
    row_taken: BoardEvent.RowTaken
    points_scored: BoardEvent.PointsScored
    luck_card_taken: BoardEvent.LuckCardTaken
    game_ended: BoardEvent.GameEnded
    row_opened: BoardEvent.RowOpened
    row_shifted: BoardEvent.RowShifted
    action_cards_dealt: BoardEvent.ActionCardsDealt
    action_card_played: BoardEvent.ActionCardPlayed
    stop_signs_removed: BoardEvent.StopSignsRemoved
    tile_drawn: BoardEvent.TileDrawn
    action_card_drawn: BoardEvent.ActionCardDrawn
    action_cards_reshuffled: BoardEvent.ActionCardsReshuffled
    def __init__(self, tiles_dealt: _Optional[_Union[BoardEvent.TilesDealt, _Mapping]] = ..., tiles_revealed: _Optional[_Union[BoardEvent.TilesRevealed, _Mapping]] = ..., luck_card_played: _Optional[_Union[BoardEvent.LuckCardPlayed, _Mapping]] = ..., tile_attached: _Optional[_Union[BoardEvent.TileAttached, _Mapping]] = ..., row_taken: _Optional[_Union[BoardEvent.RowTaken, _Mapping]] = ..., points_scored: _Optional[_Union[BoardEvent.PointsScored, _Mapping]] = ..., luck_card_taken: _Optional[_Union[BoardEvent.LuckCardTaken, _Mapping]] = ..., game_ended: _Optional[_Union[BoardEvent.GameEnded, _Mapping]] = ..., row_opened: _Optional[_Union[BoardEvent.RowOpened, _Mapping]] = ..., row_shifted: _Optional[_Union[BoardEvent.RowShifted, _Mapping]] = ..., action_cards_dealt: _Optional[_Union[BoardEvent.ActionCardsDealt, _Mapping]] = ..., action_card_played: _Optional[_Union[BoardEvent.ActionCardPlayed, _Mapping]] = ..., stop_signs_removed: _Optional[_Union[BoardEvent.StopSignsRemoved, _Mapping]] = ..., tile_drawn: _Optional[_Union[BoardEvent.TileDrawn, _Mapping]] = ..., action_card_drawn: _Optional[_Union[BoardEvent.ActionCardDrawn, _Mapping]] = ..., action_cards_reshuffled: _Optional[_Union[BoardEvent.ActionCardsReshuffled, _Mapping]] = ...) -> None: ...
