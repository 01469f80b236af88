"""The match driver: time control, bot faults, default actions and links to bot connections."""

from referee.driver.links import Defaulted, EntrantLink, FaultKind, GameInfo, Outbox, Request, SeatStats, Step
from referee.driver.match import FaultPolicy, MatchDriver, MatchObserver, MatchReport, TimeControl

__all__ = [
    "Defaulted",
    "EntrantLink",
    "FaultKind",
    "FaultPolicy",
    "GameInfo",
    "MatchDriver",
    "MatchObserver",
    "MatchReport",
    "Outbox",
    "Request",
    "SeatStats",
    "Step",
    "TimeControl",
]
