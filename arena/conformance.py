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

from arena.matches import BotExitedError, MatchPlan, MatchRun, ProcessExit, RefereeClient, play_matches
from bot_sdk import command
from bot_sdk.loader import load_bot
from referee.faults import FaultKind, short_reason
from referee.rules.registry import make_variant
from referee.rules.seeding import derive_seed


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
    reasons: list[tuple[FaultKind, str, int]] = field(default_factory=list)
    """The bot's distinct fault reasons over every game, with counts, most frequent first."""
    exit: ProcessExit | None = None
    """How the bot's process ended, with the end of its stderr."""

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
            "fault_reasons": [{"kind": k.value, "reason": r, "count": n} for k, r, n in self.reasons],
            "exit": None if self.exit is None else self.exit.to_json() | {"how": self.exit.describe()},
            "problem": self.problem(),
        }

    def summary(self) -> str:
        """What went wrong, on one line: the bot's own error, or its most frequent fault."""
        problem = self.problem()
        if not problem:
            return ""
        if self.reasons and not problem.startswith(self.reasons[0][0].value):
            return problem.splitlines()[0]
        if self.reasons:
            kind, reason, count = self.reasons[0]
            more = f" (and {len(self.reasons) - 1} more reasons)" if len(self.reasons) > 1 else ""
            return f"{kind.value} ×{count}: {short_reason(reason)}{more}"
        assert self.exit is not None  # a problem without reasons is the process's exit
        last = [line for line in self.exit.stderr.splitlines() if line.strip()][-1:]
        return f"the bot process {self.exit.describe()}" + (f"; its stderr ends: {last[0]}" if last else "")

    def problem(self) -> str:
        """What went wrong, in the bot's own terms (its error first); empty when nothing did."""
        stderr = self.exit.stderr if self.exit is not None else ""
        said = [
            line.removeprefix("bot: error: ")
            for line in stderr.splitlines()
            if line.startswith("bot: error: ")
        ]
        if said and self.exit is not None and not self.exit.clean:
            return said[-1]  # the bot never played: it could not be loaded, or the referee refused it
        lines = []
        for kind, reason, count in self.reasons[:3]:
            lines.append(f"{kind.value} ×{count}: {reason}")
        if self.exit is not None and (not self.exit.clean or not self.games):
            tail = [line for line in stderr.splitlines() if line.strip()][-5:]
            lines.append(
                f"the bot process {self.exit.describe()}"
                + (" before its games ended" if not self.games else "")
                + ("; its stderr ends:\n" + "\n".join(tail) if tail else "")
            )
        return "\n".join(lines)


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
    client: RefereeClient | None = None,
) -> CheckReport:
    """Run the conformance check of ``spec``; the bot sits in every seat position in turn.

    With ``preload`` the bot is imported here first, for a quick clear error; a submission
    from a stranger is checked with ``preload=False``, so its code only ever runs sandboxed.
    The games are played on ``client``'s referee, else on one started for the check.
    """
    settings = dict(config or {})
    if preload and command.preload(spec) is None:
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
    try:
        run: MatchRun = play_matches(
            specs,
            plans,
            variant=variant,
            config=settings,
            progress=progress,
            decision_ms=decision_ms,
            client=client,
            **extra,
        )
    except BotExitedError as exc:  # a command bot's program ended before its games: nothing to count
        return CheckReport(
            [("connects and plays every match", False), ("exits cleanly after goodbye", False)],
            0,
            0,
            {},
            exc.exit.status,
            0.0,
            exit=exc.exit,
        )
    seats = [s for m in run.matches for s in m.seats if s.entrant == "bot"]
    faults: dict[str, int] = {}
    reasons: dict[tuple[FaultKind, str], int] = {}
    for s in seats:
        for kind, count in s.faults.items():
            faults[kind] = faults.get(kind, 0) + count
        for kind, reason, count in s.reasons:
            reasons[(kind, reason)] = reasons.get((kind, reason), 0) + count
    decisions = sum(s.decisions for s in seats)
    checks = [
        (
            "connects and plays every match",
            len(seats) == games and all(m.status == "finished" for m in run.matches),
        ),
        ("answers in time", faults.get(FaultKind.TIMEOUT, 0) == 0),
        ("decides without raising", faults.get(FaultKind.EXCEPTION, 0) == 0),
        ("plays only legal actions", faults.get(FaultKind.ILLEGAL, 0) == 0),
        ("speaks the protocol", faults.get(FaultKind.PROTOCOL, 0) == 0),
        (
            "stays connected through every game",
            faults.get(FaultKind.CRASH, 0) + faults.get(FaultKind.DISCONNECT, 0) == 0,
        ),
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
        reasons=[(k, r, n) for (k, r), n in sorted(reasons.items(), key=lambda item: -item[1])],
        exit=run.exits.get("bot"),
    )
