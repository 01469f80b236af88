"""The match driver: time control, bot faults, default actions and links to bot connections."""

from referee.driver.links import Defaulted, EntrantLink, FaultKind, GameInfo, Outbox, Request, SeatStats, Step
from referee.driver.match import FaultPolicy, MatchDriver, MatchReport, TimeControl

__all__ = [
    "Defaulted",
    "EntrantLink",
    "FaultKind",
    "FaultPolicy",
    "GameInfo",
    "MatchDriver",
    "MatchReport",
    "Outbox",
    "Request",
    "SeatStats",
    "Step",
    "TimeControl",
]
