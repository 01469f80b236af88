"""The match driver: time control, bot faults, default actions and links to bot connections."""

from referee.driver.links import (
    Defaulted,
    EntrantLink,
    GameInfo,
    Outbox,
    Request,
    SeatStats,
    StandingLink,
    Step,
)
from referee.driver.match import FaultPolicy, MatchDriver, MatchObserver, MatchReport, TimeControl
from referee.faults import FaultKind, FaultNotice

__all__ = [
    "Defaulted",
    "EntrantLink",
    "FaultKind",
    "FaultNotice",
    "FaultPolicy",
    "GameInfo",
    "MatchDriver",
    "MatchObserver",
    "MatchReport",
    "Outbox",
    "Request",
    "SeatStats",
    "StandingLink",
    "Step",
    "TimeControl",
]
