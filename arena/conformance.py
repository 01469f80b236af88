"""The conformance check behind ``sixnimmt bot check`` and bot submission.

The bot plays many concurrent matches against random bots, every bot its own process under a
real referee, and must: play every match, answer in time, play only legal actions, speak the
protocol, stay connected, and exit cleanly after the referee's goodbye.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from arena.matches import (
    STOPPED_AFTER_TIMEOUTS,
    BotExitedError,
    MatchPlan,
    MatchRun,
    ProcessExit,
    RefereeClient,
    SeatOutcome,
    default_time_control,
    play_matches,
    time_control_text,
)
from bot_sdk import command
from bot_sdk.loader import load_bot
from referee.faults import FaultGroup, FaultKind, group_reasons, short_reason
from referee.rules.registry import make_variant
from referee.rules.seeding import derive_seed


@dataclass(frozen=True, slots=True)
class Decisions:
    """A bot's decisions over some seats: how many it had, how many it answered, how long it took.

    The referee counts, per seat, the decisions played as the bot answered (``decisions``), the
    defaulted ones (``defaulted``: a timeout, an illegal action, an exception, a lost connection)
    and the time from request to reply (``think_ms``), which includes the wait for the answers
    that never came. So the time per decision is taken over the answered decisions (legal,
    illegal, or raised) of the seats without a timeout; without such a decision there is none.
    """

    asked: int
    """Every decision of the bot's seats: answered or defaulted."""
    played: int
    """The bot's own legal answers, played as it gave them."""
    defaulted: int
    timed: int
    """The answered decisions the time per decision is taken over."""
    ms_per_decision: float | None

    @classmethod
    def of(cls, seats: Sequence[SeatOutcome]) -> Decisions:
        """The figures of ``seats`` (one bot's)."""
        played = sum(s.decisions for s in seats)
        defaulted = sum(s.defaulted for s in seats)
        clean = [s for s in seats if not s.faults.get(FaultKind.TIMEOUT)]
        timed = sum(
            s.decisions + s.faults.get(FaultKind.ILLEGAL, 0) + s.faults.get(FaultKind.EXCEPTION, 0)
            for s in clean
        )
        ms = round(sum(s.think_ms for s in clean) / timed, 2) if timed else None
        return cls(played + defaulted, played, defaulted, timed, ms)

    def text(self) -> str:
        """One line, e.g. ``290 decisions (41 played, 249 defaulted), 3.2 ms each on average``."""
        said = f"{self.asked} decision{'' if self.asked == 1 else 's'}"
        if self.defaulted:
            said += f" ({self.played} played, {self.defaulted} defaulted)"
        if self.ms_per_decision is None:
            return said + ", none answered in time to measure"
        return said + f", {self.ms_per_decision} ms each on average over {self.timed} answered"

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready form (``think_ms_per_decision`` is ``None`` without an answer to time)."""
        return {
            "decisions": self.asked,
            "played": self.played,
            "defaulted": self.defaulted,
            "think_ms_per_decision": self.ms_per_decision,
            "timed_decisions": self.timed,
        }


@dataclass(slots=True)
class CheckReport:
    """Each check with whether it passed, and the bot's figures."""

    checks: list[tuple[str, bool]]
    games: int
    decisions: Decisions
    faults: dict[str, int]
    exit_code: int | None
    time_control: dict[str, int]
    """The time control the games were played under (``decision_ms``, ``bank_ms``)."""
    mean_score: float | None = None
    details: dict[str, Any] = field(default_factory=dict)
    reasons: list[FaultGroup] = field(default_factory=list)
    """The bot's faults over every game grouped by cause, each with an example, most frequent first."""
    exit: ProcessExit | None = None
    """How the bot's process ended, with the end of its stderr."""

    def time_control_line(self) -> str:
        """The time control, as every command's header says it."""
        return time_control_text(self.time_control["decision_ms"], self.time_control["bank_ms"])

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
            "time_control": self.time_control,
            **self.decisions.to_json(),
            "faults": self.faults,
            "exit_code": self.exit_code,
            "mean_score": self.mean_score,
            "fault_reasons": [group.to_json() for group in self.reasons],
            "exit": None if self.exit is None else self.exit.to_json() | {"how": self.exit.describe()},
            "problem": self.problem(),
        }

    def summary(self) -> str:
        """What went wrong, on one line: the bot's own error, or its most frequent fault."""
        problem = self.problem()
        if not problem:
            return ""
        if self.reasons and not problem.startswith(self.reasons[0].kind.value):
            return problem.splitlines()[0]
        if self.reasons:
            first = self.reasons[0]
            others = len(self.reasons) - 1
            more = f" (and {others} more cause{'' if others == 1 else 's'})" if others else ""
            return f"{first.label()}: {short_reason(first.example)}{more}"
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
        for group in self.reasons[:3]:
            lines.append(f"{group.label()}: {group.example}")
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
    decision_ms: int | None = None,
    bank_ms: int | None = None,
    launch: Callable[..., Any] | None = None,
    progress: Callable[[int], None] | None = None,
    preload: bool = True,
    client: RefereeClient | None = None,
) -> CheckReport:
    """Run the conformance check of ``spec``; the bot sits in every seat position in turn.

    With ``preload`` the bot is imported here first, for a quick clear error; a submission
    from a stranger is checked with ``preload=False``, so its code only ever runs sandboxed.
    The games are played on ``client``'s referee, else on one started for the check, under the
    platform's time control (:func:`arena.matches.default_time_control`) unless ``decision_ms``
    or ``bank_ms`` say otherwise.
    """
    clock = default_time_control()
    clock.update({k: v for k, v in {"decision_ms": decision_ms, "bank_ms": bank_ms}.items() if v is not None})
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
            client=client,
            **clock,
            **extra,
        )
    except BotExitedError as exc:  # a command bot's program ended before its games: nothing to count
        return CheckReport(
            [("connects and plays every match", False), ("exits cleanly after goodbye", False)],
            0,
            Decisions.of([]),
            {},
            exc.exit.status,
            clock,
            exit=exc.exit,
        )
    seats = [s for m in run.matches for s in m.seats if s.entrant == "bot"]
    faults: dict[str, int] = {}
    for s in seats:
        for kind, count in s.faults.items():
            faults[kind] = faults.get(kind, 0) + count
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
        _exit_check(run.exits.get("bot"), run.exit_codes.get("bot")),
    ]
    return CheckReport(
        checks,
        len(seats),
        Decisions.of(seats),
        faults,
        run.exit_codes.get("bot"),
        clock,
        statistics.fmean(s.score for s in seats) if seats else None,
        reasons=group_reasons(reason for s in seats for reason in s.reasons),
        exit=run.exits.get("bot"),
    )


def _exit_check(exit: ProcessExit | None, code: int | None) -> tuple[str, bool]:
    """Whether the bot exited cleanly after its goodbye; not judged for a bot stopped at once
    because it had timed out (:data:`arena.matches.STOPPED_AFTER_TIMEOUTS`): it had no chance
    to, and "answers in time" already fails."""
    if exit is not None and exit.limit == STOPPED_AFTER_TIMEOUTS:
        return "exits cleanly after goodbye (not judged: stopped after its timeouts)", True
    return "exits cleanly after goodbye", code == 0
