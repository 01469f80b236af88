from google.protobuf import any_pb2 as _any_pb2
from sixnimmt.v1 import anniversary_pb2 as _anniversary_pb2
from sixnimmt.v1 import board_pb2 as _board_pb2
from sixnimmt.v1 import classic_pb2 as _classic_pb2
from sixnimmt.v1 import junior_pb2 as _junior_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class DecisionKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    DECISION_KIND_UNSPECIFIED: _ClassVar[DecisionKind]
    DECISION_KIND_CARD: _ClassVar[DecisionKind]
    DECISION_KIND_ROW: _ClassVar[DecisionKind]
    DECISION_KIND_CARD_ROW: _ClassVar[DecisionKind]
    DECISION_KIND_CARDS: _ClassVar[DecisionKind]
    DECISION_KIND_LUCK: _ClassVar[DecisionKind]
    DECISION_KIND_ACTION_CARD: _ClassVar[DecisionKind]
    DECISION_KIND_PILE: _ClassVar[DecisionKind]

class FaultKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    FAULT_KIND_UNSPECIFIED: _ClassVar[FaultKind]
    FAULT_KIND_TIMEOUT: _ClassVar[FaultKind]
    FAULT_KIND_CRASH: _ClassVar[FaultKind]
    FAULT_KIND_DISCONNECT: _ClassVar[FaultKind]
    FAULT_KIND_ILLEGAL: _ClassVar[FaultKind]
    FAULT_KIND_PROTOCOL: _ClassVar[FaultKind]
    FAULT_KIND_EXCEPTION: _ClassVar[FaultKind]

class MatchStatus(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    MATCH_STATUS_UNSPECIFIED: _ClassVar[MatchStatus]
    MATCH_STATUS_WAITING: _ClassVar[MatchStatus]
    MATCH_STATUS_RUNNING: _ClassVar[MatchStatus]
    MATCH_STATUS_FINISHED: _ClassVar[MatchStatus]
    MATCH_STATUS_ABORTED: _ClassVar[MatchStatus]
DECISION_KIND_UNSPECIFIED: DecisionKind
DECISION_KIND_CARD: DecisionKind
DECISION_KIND_ROW: DecisionKind
DECISION_KIND_CARD_ROW: DecisionKind
DECISION_KIND_CARDS: DecisionKind
DECISION_KIND_LUCK: DecisionKind
DECISION_KIND_ACTION_CARD: DecisionKind
DECISION_KIND_PILE: DecisionKind
FAULT_KIND_UNSPECIFIED: FaultKind
FAULT_KIND_TIMEOUT: FaultKind
FAULT_KIND_CRASH: FaultKind
FAULT_KIND_DISCONNECT: FaultKind
FAULT_KIND_ILLEGAL: FaultKind
FAULT_KIND_PROTOCOL: FaultKind
FAULT_KIND_EXCEPTION: FaultKind
MATCH_STATUS_UNSPECIFIED: MatchStatus
MATCH_STATUS_WAITING: MatchStatus
MATCH_STATUS_RUNNING: MatchStatus
MATCH_STATUS_FINISHED: MatchStatus
MATCH_STATUS_ABORTED: MatchStatus

class IntTuple(_message.Message):
    __slots__ = ("values",)
    VALUES_FIELD_NUMBER: _ClassVar[int]
    values: _containers.RepeatedScalarFieldContainer[int]
    def __init__(self, values: _Optional[_Iterable[int]] = ...) -> None: ...

class Action(_message.Message):
    __slots__ = ("number", "tuple")
    NUMBER_FIELD_NUMBER: _ClassVar[int]
    TUPLE_FIELD_NUMBER: _ClassVar[int]
    number: int
    tuple: IntTuple
    def __init__(self, number: _Optional[int] = ..., tuple: _Optional[_Union[IntTuple, _Mapping]] = ...) -> None: ...

class DecisionRequest(_message.Message):
    __slots__ = ("id", "match_id", "seat", "kind", "options", "tuple_options", "deadline_ms", "time_bank_ms", "classic", "junior", "board", "anniversary", "plugin", "table_from")
    ID_FIELD_NUMBER: _ClassVar[int]
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    OPTIONS_FIELD_NUMBER: _ClassVar[int]
    TUPLE_OPTIONS_FIELD_NUMBER: _ClassVar[int]
    DEADLINE_MS_FIELD_NUMBER: _ClassVar[int]
    TIME_BANK_MS_FIELD_NUMBER: _ClassVar[int]
    CLASSIC_FIELD_NUMBER: _ClassVar[int]
    JUNIOR_FIELD_NUMBER: _ClassVar[int]
    BOARD_FIELD_NUMBER: _ClassVar[int]
    ANNIVERSARY_FIELD_NUMBER: _ClassVar[int]
    PLUGIN_FIELD_NUMBER: _ClassVar[int]
    TABLE_FROM_FIELD_NUMBER: _ClassVar[int]
    id: int
    match_id: str
    seat: int
    kind: DecisionKind
    options: _containers.RepeatedScalarFieldContainer[int]
    tuple_options: _containers.RepeatedCompositeFieldContainer[IntTuple]
    deadline_ms: int
    time_bank_ms: int
    classic: _classic_pb2.ClassicView
    junior: _junior_pb2.JuniorView
    board: _board_pb2.BoardView
    anniversary: _anniversary_pb2.AnniversaryView
    plugin: _any_pb2.Any
    table_from: int
    def __init__(self, id: _Optional[int] = ..., match_id: _Optional[str] = ..., seat: _Optional[int] = ..., kind: _Optional[_Union[DecisionKind, str]] = ..., options: _Optional[_Iterable[int]] = ..., tuple_options: _Optional[_Iterable[_Union[IntTuple, _Mapping]]] = ..., deadline_ms: _Optional[int] = ..., time_bank_ms: _Optional[int] = ..., classic: _Optional[_Union[_classic_pb2.ClassicView, _Mapping]] = ..., junior: _Optional[_Union[_junior_pb2.JuniorView, _Mapping]] = ..., board: _Optional[_Union[_board_pb2.BoardView, _Mapping]] = ..., anniversary: _Optional[_Union[_anniversary_pb2.AnniversaryView, _Mapping]] = ..., plugin: _Optional[_Union[_any_pb2.Any, _Mapping]] = ..., table_from: _Optional[int] = ...) -> None: ...

class DecisionReply(_message.Message):
    __slots__ = ("id", "action", "error")
    ID_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    id: int
    action: Action
    error: str
    def __init__(self, id: _Optional[int] = ..., action: _Optional[_Union[Action, _Mapping]] = ..., error: _Optional[str] = ...) -> None: ...

class MatchEvent(_message.Message):
    __slots__ = ("match_id", "step", "classic", "junior", "board", "anniversary", "plugin")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    STEP_FIELD_NUMBER: _ClassVar[int]
    CLASSIC_FIELD_NUMBER: _ClassVar[int]
    JUNIOR_FIELD_NUMBER: _ClassVar[int]
    BOARD_FIELD_NUMBER: _ClassVar[int]
    ANNIVERSARY_FIELD_NUMBER: _ClassVar[int]
    PLUGIN_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    step: int
    classic: _classic_pb2.ClassicEvent
    junior: _junior_pb2.JuniorEvent
    board: _board_pb2.BoardEvent
    anniversary: _anniversary_pb2.AnniversaryEvent
    plugin: _any_pb2.Any
    def __init__(self, match_id: _Optional[str] = ..., step: _Optional[int] = ..., classic: _Optional[_Union[_classic_pb2.ClassicEvent, _Mapping]] = ..., junior: _Optional[_Union[_junior_pb2.JuniorEvent, _Mapping]] = ..., board: _Optional[_Union[_board_pb2.BoardEvent, _Mapping]] = ..., anniversary: _Optional[_Union[_anniversary_pb2.AnniversaryEvent, _Mapping]] = ..., plugin: _Optional[_Union[_any_pb2.Any, _Mapping]] = ...) -> None: ...

class FaultCount(_message.Message):
    __slots__ = ("kind", "count")
    KIND_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    kind: FaultKind
    count: int
    def __init__(self, kind: _Optional[_Union[FaultKind, str]] = ..., count: _Optional[int] = ...) -> None: ...

class SeatResult(_message.Message):
    __slots__ = ("seat", "entrant", "score", "rank", "faults", "defaulted", "decisions", "forfeited", "think_ms", "reasons")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    ENTRANT_FIELD_NUMBER: _ClassVar[int]
    SCORE_FIELD_NUMBER: _ClassVar[int]
    RANK_FIELD_NUMBER: _ClassVar[int]
    FAULTS_FIELD_NUMBER: _ClassVar[int]
    DEFAULTED_FIELD_NUMBER: _ClassVar[int]
    DECISIONS_FIELD_NUMBER: _ClassVar[int]
    FORFEITED_FIELD_NUMBER: _ClassVar[int]
    THINK_MS_FIELD_NUMBER: _ClassVar[int]
    REASONS_FIELD_NUMBER: _ClassVar[int]
    seat: int
    entrant: str
    score: int
    rank: int
    faults: _containers.RepeatedCompositeFieldContainer[FaultCount]
    defaulted: int
    decisions: int
    forfeited: bool
    think_ms: int
    reasons: _containers.RepeatedCompositeFieldContainer[FaultReason]
    def __init__(self, seat: _Optional[int] = ..., entrant: _Optional[str] = ..., score: _Optional[int] = ..., rank: _Optional[int] = ..., faults: _Optional[_Iterable[_Union[FaultCount, _Mapping]]] = ..., defaulted: _Optional[int] = ..., decisions: _Optional[int] = ..., forfeited: _Optional[bool] = ..., think_ms: _Optional[int] = ..., reasons: _Optional[_Iterable[_Union[FaultReason, _Mapping]]] = ...) -> None: ...

class FaultReason(_message.Message):
    __slots__ = ("kind", "reason", "count")
    KIND_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    COUNT_FIELD_NUMBER: _ClassVar[int]
    kind: FaultKind
    reason: str
    count: int
    def __init__(self, kind: _Optional[_Union[FaultKind, str]] = ..., reason: _Optional[str] = ..., count: _Optional[int] = ...) -> None: ...

class MatchResult(_message.Message):
    __slots__ = ("match_id", "status", "variant", "seats", "termination", "digest", "transcript_json", "error")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    STATUS_FIELD_NUMBER: _ClassVar[int]
    VARIANT_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    TERMINATION_FIELD_NUMBER: _ClassVar[int]
    DIGEST_FIELD_NUMBER: _ClassVar[int]
    TRANSCRIPT_JSON_FIELD_NUMBER: _ClassVar[int]
    ERROR_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    status: MatchStatus
    variant: str
    seats: _containers.RepeatedCompositeFieldContainer[SeatResult]
    termination: str
    digest: str
    transcript_json: str
    error: str
    def __init__(self, match_id: _Optional[str] = ..., status: _Optional[_Union[MatchStatus, str]] = ..., variant: _Optional[str] = ..., seats: _Optional[_Iterable[_Union[SeatResult, _Mapping]]] = ..., termination: _Optional[str] = ..., digest: _Optional[str] = ..., transcript_json: _Optional[str] = ..., error: _Optional[str] = ...) -> None: ...
