"""The conformance check behind ``sixnimmt bot check`` and bot submission.

The bot plays many concurrent matches against random bots, every bot its own process under a
real referee, and must: play every match, answer in time, play only legal actions, speak the
protocol, stay connected, and exit cleanly after the referee's goodbye.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from bot_sdk.loader import load_bot
from bot_sdk.remote import MatchPlan, RemoteRun, play_remote
from bot_sdk.tournament import derive_seed
from referee.rules.registry import make_variant


@dataclass(slots=True)
class CheckReport:
    """Each check with whether it passed, and the bot's figures."""

    checks: list[tuple[str, bool]]
    games: int
    decisions: int
    faults: dict[str, int]
    exit_code: int | None
    think_ms_per_decision: float
    mean_score: float | None = None
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """Whether every check passed."""
        return all(passed for _, passed in self.checks)

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready form."""
        return {
            "ok": self.ok,
            "checks": [{"check": name, "passed": passed} for name, passed in self.checks],
            "games": self.games,
            "decisions": self.decisions,
            "faults": self.faults,
            "exit_code": self.exit_code,
            "think_ms_per_decision": self.think_ms_per_decision,
            "mean_score": self.mean_score,
        }


def check(
    spec: str,
    *,
    variant: str = "classic",
    config: Mapping[str, Any] | None = None,
    games: int = 16,
    seed: int = 1,
    decision_ms: int = 2000,
    launch: Callable[..., Any] | None = None,
    progress: Callable[[int], None] | None = None,
    preload: bool = True,
) -> CheckReport:
    """Run the conformance check of ``spec``; the bot sits in every seat position in turn.

    With ``preload`` the bot is imported here first, for a quick clear error; a submission
    from a stranger is checked with ``preload=False``, so its code only ever runs sandboxed.
    """
    settings = dict(config or {})
    if preload:
        load_bot(spec, variant)
    players = make_variant(variant, settings).players
    settings.setdefault("players", players)
    names = ["bot", *[f"random{i}" for i in range(1, players)]]
    specs = {"bot": spec, **{name: "random" for name in names[1:]}}
    plans = []
    for g in range(games):
        others = iter(names[1:])
        seating = tuple("bot" if seat == g % players else next(others) for seat in range(players))
        plans.append(MatchPlan(seating, derive_seed(seed, "check", g)))
    extra: dict[str, Any] = {"launch": launch} if launch is not None else {}
    run: RemoteRun = play_remote(
        specs, plans, variant=variant, config=settings, progress=progress, decision_ms=decision_ms, **extra
    )
    seats = [s for m in run.matches for s in m.seats if s.entrant == "bot"]
    faults: dict[str, int] = {}
    for s in seats:
        for kind, count in s.faults.items():
            faults[kind] = faults.get(kind, 0) + count
    decisions = sum(s.decisions for s in seats)
    checks = [
        (
            "connects and plays every match",
            len(seats) == games and all(m.status == "finished" for m in run.matches),
        ),
        ("answers in time", faults.get("timeout", 0) == 0),
        ("plays only legal actions", faults.get("illegal", 0) == 0),
        ("speaks the protocol", faults.get("protocol", 0) == 0),
        ("stays connected through every game", faults.get("crash", 0) + faults.get("disconnect", 0) == 0),
        ("plays many matches at once over one stream", len(seats) == games and games > 1),
        ("exits cleanly after goodbye", run.exit_codes.get("bot") == 0),
    ]
    return CheckReport(
        checks,
        len(seats),
        decisions,
        faults,
        run.exit_codes.get("bot"),
        round(sum(s.think_ms for s in seats) / max(1, decisions), 2),
        statistics.fmean(s.score for s in seats) if seats else None,
    )
