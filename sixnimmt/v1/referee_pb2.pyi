from sixnimmt.v1 import game_pb2 as _game_pb2
from google.protobuf.internal import containers as _containers
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class BotMessage(_message.Message):
    __slots__ = ("hello", "decisions", "goodbye")
    HELLO_FIELD_NUMBER: _ClassVar[int]
    DECISIONS_FIELD_NUMBER: _ClassVar[int]
    GOODBYE_FIELD_NUMBER: _ClassVar[int]
    hello: Hello
    decisions: DecisionBatch
    goodbye: Goodbye
    def __init__(self, hello: _Optional[_Union[Hello, _Mapping]] = ..., decisions: _Optional[_Union[DecisionBatch, _Mapping]] = ..., goodbye: _Optional[_Union[Goodbye, _Mapping]] = ...) -> None: ...

class Hello(_message.Message):
    __slots__ = ("token", "name", "protocol", "events", "table_once")
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    PROTOCOL_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    TABLE_ONCE_FIELD_NUMBER: _ClassVar[int]
    token: str
    name: str
    protocol: int
    events: bool
    table_once: bool
    def __init__(self, token: _Optional[str] = ..., name: _Optional[str] = ..., protocol: _Optional[int] = ..., events: _Optional[bool] = ..., table_once: _Optional[bool] = ...) -> None: ...

class DecisionBatch(_message.Message):
    __slots__ = ("replies",)
    REPLIES_FIELD_NUMBER: _ClassVar[int]
    replies: _containers.RepeatedCompositeFieldContainer[_game_pb2.DecisionReply]
    def __init__(self, replies: _Optional[_Iterable[_Union[_game_pb2.DecisionReply, _Mapping]]] = ...) -> None: ...

class Goodbye(_message.Message):
    __slots__ = ("reason",)
    REASON_FIELD_NUMBER: _ClassVar[int]
    reason: str
    def __init__(self, reason: _Optional[str] = ...) -> None: ...

class RefereeMessage(_message.Message):
    __slots__ = ("welcome", "update", "goodbye")
    WELCOME_FIELD_NUMBER: _ClassVar[int]
    UPDATE_FIELD_NUMBER: _ClassVar[int]
    GOODBYE_FIELD_NUMBER: _ClassVar[int]
    welcome: Welcome
    update: Update
    goodbye: Goodbye
    def __init__(self, welcome: _Optional[_Union[Welcome, _Mapping]] = ..., update: _Optional[_Union[Update, _Mapping]] = ..., goodbye: _Optional[_Union[Goodbye, _Mapping]] = ...) -> None: ...

class SeatRef(_message.Message):
    __slots__ = ("match_id", "seat")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    seat: int
    def __init__(self, match_id: _Optional[str] = ..., seat: _Optional[int] = ...) -> None: ...

class Welcome(_message.Message):
    __slots__ = ("seats", "protocol")
    SEATS_FIELD_NUMBER: _ClassVar[int]
    PROTOCOL_FIELD_NUMBER: _ClassVar[int]
    seats: _containers.RepeatedCompositeFieldContainer[SeatRef]
    protocol: int
    def __init__(self, seats: _Optional[_Iterable[_Union[SeatRef, _Mapping]]] = ..., protocol: _Optional[int] = ...) -> None: ...

class GameStart(_message.Message):
    __slots__ = ("match_id", "seat", "variant", "config_json", "seat_seed", "seat_names")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    VARIANT_FIELD_NUMBER: _ClassVar[int]
    CONFIG_JSON_FIELD_NUMBER: _ClassVar[int]
    SEAT_SEED_FIELD_NUMBER: _ClassVar[int]
    SEAT_NAMES_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    seat: int
    variant: str
    config_json: str
    seat_seed: int
    seat_names: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, match_id: _Optional[str] = ..., seat: _Optional[int] = ..., variant: _Optional[str] = ..., config_json: _Optional[str] = ..., seat_seed: _Optional[int] = ..., seat_names: _Optional[_Iterable[str]] = ...) -> None: ...

class GameOver(_message.Message):
    __slots__ = ("match_id", "seat", "scores", "ranks", "termination")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    RANKS_FIELD_NUMBER: _ClassVar[int]
    TERMINATION_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    seat: int
    scores: _containers.RepeatedScalarFieldContainer[int]
    ranks: _containers.RepeatedScalarFieldContainer[int]
    termination: str
    def __init__(self, match_id: _Optional[str] = ..., seat: _Optional[int] = ..., scores: _Optional[_Iterable[int]] = ..., ranks: _Optional[_Iterable[int]] = ..., termination: _Optional[str] = ...) -> None: ...

class Update(_message.Message):
    __slots__ = ("starts", "events", "requests", "overs", "faults")
    STARTS_FIELD_NUMBER: _ClassVar[int]
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    REQUESTS_FIELD_NUMBER: _ClassVar[int]
    OVERS_FIELD_NUMBER: _ClassVar[int]
    FAULTS_FIELD_NUMBER: _ClassVar[int]
    starts: _containers.RepeatedCompositeFieldContainer[GameStart]
    events: _containers.RepeatedCompositeFieldContainer[_game_pb2.MatchEvent]
    requests: _containers.RepeatedCompositeFieldContainer[_game_pb2.DecisionRequest]
    overs: _containers.RepeatedCompositeFieldContainer[GameOver]
    faults: _containers.RepeatedCompositeFieldContainer[FaultNotice]
    def __init__(self, starts: _Optional[_Iterable[_Union[GameStart, _Mapping]]] = ..., events: _Optional[_Iterable[_Union[_game_pb2.MatchEvent, _Mapping]]] = ..., requests: _Optional[_Iterable[_Union[_game_pb2.DecisionRequest, _Mapping]]] = ..., overs: _Optional[_Iterable[_Union[GameOver, _Mapping]]] = ..., faults: _Optional[_Iterable[_Union[FaultNotice, _Mapping]]] = ...) -> None: ...

class FaultNotice(_message.Message):
    __slots__ = ("kind", "request_id", "match_id", "seat", "reason")
    KIND_FIELD_NUMBER: _ClassVar[int]
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    kind: _game_pb2.FaultKind
    request_id: int
    match_id: str
    seat: int
    reason: str
    def __init__(self, kind: _Optional[_Union[_game_pb2.FaultKind, str]] = ..., request_id: _Optional[int] = ..., match_id: _Optional[str] = ..., seat: _Optional[int] = ..., reason: _Optional[str] = ...) -> None: ...

class MatchSpec(_message.Message):
    __slots__ = ("variant", "config_json", "seed", "entrants")
    VARIANT_FIELD_NUMBER: _ClassVar[int]
    CONFIG_JSON_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    ENTRANTS_FIELD_NUMBER: _ClassVar[int]
    variant: str
    config_json: str
    seed: int
    entrants: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, variant: _Optional[str] = ..., config_json: _Optional[str] = ..., seed: _Optional[int] = ..., entrants: _Optional[_Iterable[str]] = ...) -> None: ...

class TimeControl(_message.Message):
    __slots__ = ("decision_ms", "bank_ms", "connect_ms")
    DECISION_MS_FIELD_NUMBER: _ClassVar[int]
    BANK_MS_FIELD_NUMBER: _ClassVar[int]
    CONNECT_MS_FIELD_NUMBER: _ClassVar[int]
    decision_ms: int
    bank_ms: int
    connect_ms: int
    def __init__(self, decision_ms: _Optional[int] = ..., bank_ms: _Optional[int] = ..., connect_ms: _Optional[int] = ...) -> None: ...

class FaultPolicy(_message.Message):
    __slots__ = ("max_faults", "omit_events")
    MAX_FAULTS_FIELD_NUMBER: _ClassVar[int]
    OMIT_EVENTS_FIELD_NUMBER: _ClassVar[int]
    max_faults: int
    omit_events: bool
    def __init__(self, max_faults: _Optional[int] = ..., omit_events: _Optional[bool] = ...) -> None: ...

class CreateMatchesRequest(_message.Message):
    __slots__ = ("matches", "time_control", "fault_policy", "seat_seed_key", "standing", "remote", "remote_wait")
    class StandingEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    class RemoteEntry(_message.Message):
        __slots__ = ("key", "value")
        KEY_FIELD_NUMBER: _ClassVar[int]
        VALUE_FIELD_NUMBER: _ClassVar[int]
        key: str
        value: str
        def __init__(self, key: _Optional[str] = ..., value: _Optional[str] = ...) -> None: ...
    MATCHES_FIELD_NUMBER: _ClassVar[int]
    TIME_CONTROL_FIELD_NUMBER: _ClassVar[int]
    FAULT_POLICY_FIELD_NUMBER: _ClassVar[int]
    SEAT_SEED_KEY_FIELD_NUMBER: _ClassVar[int]
    STANDING_FIELD_NUMBER: _ClassVar[int]
    REMOTE_FIELD_NUMBER: _ClassVar[int]
    REMOTE_WAIT_FIELD_NUMBER: _ClassVar[int]
    matches: _containers.RepeatedCompositeFieldContainer[MatchSpec]
    time_control: TimeControl
    fault_policy: FaultPolicy
    seat_seed_key: bytes
    standing: _containers.ScalarMap[str, str]
    remote: _containers.ScalarMap[str, str]
    remote_wait: bool
    def __init__(self, matches: _Optional[_Iterable[_Union[MatchSpec, _Mapping]]] = ..., time_control: _Optional[_Union[TimeControl, _Mapping]] = ..., fault_policy: _Optional[_Union[FaultPolicy, _Mapping]] = ..., seat_seed_key: _Optional[bytes] = ..., standing: _Optional[_Mapping[str, str]] = ..., remote: _Optional[_Mapping[str, str]] = ..., remote_wait: _Optional[bool] = ...) -> None: ...

class EntrantToken(_message.Message):
    __slots__ = ("entrant", "token", "seats")
    ENTRANT_FIELD_NUMBER: _ClassVar[int]
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    SEATS_FIELD_NUMBER: _ClassVar[int]
    entrant: str
    token: str
    seats: _containers.RepeatedCompositeFieldContainer[SeatRef]
    def __init__(self, entrant: _Optional[str] = ..., token: _Optional[str] = ..., seats: _Optional[_Iterable[_Union[SeatRef, _Mapping]]] = ...) -> None: ...

class CreateMatchesResponse(_message.Message):
    __slots__ = ("match_ids", "tokens")
    MATCH_IDS_FIELD_NUMBER: _ClassVar[int]
    TOKENS_FIELD_NUMBER: _ClassVar[int]
    match_ids: _containers.RepeatedScalarFieldContainer[str]
    tokens: _containers.RepeatedCompositeFieldContainer[EntrantToken]
    def __init__(self, match_ids: _Optional[_Iterable[str]] = ..., tokens: _Optional[_Iterable[_Union[EntrantToken, _Mapping]]] = ...) -> None: ...

class OpenStandingRequest(_message.Message):
    __slots__ = ("name",)
    NAME_FIELD_NUMBER: _ClassVar[int]
    name: str
    def __init__(self, name: _Optional[str] = ...) -> None: ...

class OpenStandingResponse(_message.Message):
    __slots__ = ("token",)
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    token: str
    def __init__(self, token: _Optional[str] = ...) -> None: ...

class CloseStandingRequest(_message.Message):
    __slots__ = ("tokens", "reason")
    TOKENS_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    tokens: _containers.RepeatedScalarFieldContainer[str]
    reason: str
    def __init__(self, tokens: _Optional[_Iterable[str]] = ..., reason: _Optional[str] = ...) -> None: ...

class CloseStandingResponse(_message.Message):
    __slots__ = ("closed",)
    CLOSED_FIELD_NUMBER: _ClassVar[int]
    closed: int
    def __init__(self, closed: _Optional[int] = ...) -> None: ...

class RemoteKey(_message.Message):
    __slots__ = ("key_id", "account", "sha256", "max_connections", "max_matches")
    KEY_ID_FIELD_NUMBER: _ClassVar[int]
    ACCOUNT_FIELD_NUMBER: _ClassVar[int]
    SHA256_FIELD_NUMBER: _ClassVar[int]
    MAX_CONNECTIONS_FIELD_NUMBER: _ClassVar[int]
    MAX_MATCHES_FIELD_NUMBER: _ClassVar[int]
    key_id: str
    account: str
    sha256: str
    max_connections: int
    max_matches: int
    def __init__(self, key_id: _Optional[str] = ..., account: _Optional[str] = ..., sha256: _Optional[str] = ..., max_connections: _Optional[int] = ..., max_matches: _Optional[int] = ...) -> None: ...

class SetRemoteKeysRequest(_message.Message):
    __slots__ = ("keys", "generation")
    KEYS_FIELD_NUMBER: _ClassVar[int]
    GENERATION_FIELD_NUMBER: _ClassVar[int]
    keys: _containers.RepeatedCompositeFieldContainer[RemoteKey]
    generation: int
    def __init__(self, keys: _Optional[_Iterable[_Union[RemoteKey, _Mapping]]] = ..., generation: _Optional[int] = ...) -> None: ...

class SetRemoteKeysResponse(_message.Message):
    __slots__ = ("keys", "closed", "generation", "stale")
    KEYS_FIELD_NUMBER: _ClassVar[int]
    CLOSED_FIELD_NUMBER: _ClassVar[int]
    GENERATION_FIELD_NUMBER: _ClassVar[int]
    STALE_FIELD_NUMBER: _ClassVar[int]
    keys: int
    closed: int
    generation: int
    stale: bool
    def __init__(self, keys: _Optional[int] = ..., closed: _Optional[int] = ..., generation: _Optional[int] = ..., stale: _Optional[bool] = ...) -> None: ...

class GetRemoteStatusRequest(_message.Message):
    __slots__ = ("accounts",)
    ACCOUNTS_FIELD_NUMBER: _ClassVar[int]
    accounts: _containers.RepeatedScalarFieldContainer[str]
    def __init__(self, accounts: _Optional[_Iterable[str]] = ...) -> None: ...

class RemoteAccountStatus(_message.Message):
    __slots__ = ("account", "connections", "matches", "room")
    ACCOUNT_FIELD_NUMBER: _ClassVar[int]
    CONNECTIONS_FIELD_NUMBER: _ClassVar[int]
    MATCHES_FIELD_NUMBER: _ClassVar[int]
    ROOM_FIELD_NUMBER: _ClassVar[int]
    account: str
    connections: int
    matches: int
    room: int
    def __init__(self, account: _Optional[str] = ..., connections: _Optional[int] = ..., matches: _Optional[int] = ..., room: _Optional[int] = ...) -> None: ...

class GetRemoteStatusResponse(_message.Message):
    __slots__ = ("accounts", "keys_loaded")
    ACCOUNTS_FIELD_NUMBER: _ClassVar[int]
    KEYS_LOADED_FIELD_NUMBER: _ClassVar[int]
    accounts: _containers.RepeatedCompositeFieldContainer[RemoteAccountStatus]
    keys_loaded: bool
    def __init__(self, accounts: _Optional[_Iterable[_Union[RemoteAccountStatus, _Mapping]]] = ..., keys_loaded: _Optional[bool] = ...) -> None: ...

class WatchMatchRequest(_message.Message):
    __slots__ = ("match_id",)
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    def __init__(self, match_id: _Optional[str] = ...) -> None: ...

class GetResultRequest(_message.Message):
    __slots__ = ("match_id", "wait")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    WAIT_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    wait: bool
    def __init__(self, match_id: _Optional[str] = ..., wait: _Optional[bool] = ...) -> None: ...

class GetResultsRequest(_message.Message):
    __slots__ = ("match_ids", "wait")
    MATCH_IDS_FIELD_NUMBER: _ClassVar[int]
    WAIT_FIELD_NUMBER: _ClassVar[int]
    match_ids: _containers.RepeatedScalarFieldContainer[str]
    wait: bool
    def __init__(self, match_ids: _Optional[_Iterable[str]] = ..., wait: _Optional[bool] = ...) -> None: ...
