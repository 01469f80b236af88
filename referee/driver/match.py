"""The match driver: asks every pending seat concurrently, under time control, and applies.

A late, crashed, disconnected or illegal bot gets the variant's deterministic default action
and a counted fault; a seat whose faults exceed the policy's limit forfeits and is no longer
asked. Nothing a bot does raises here: the match always completes.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from referee.driver.clock import Deadline, Deadlines, deadlines
from referee.driver.links import Defaulted, EntrantLink, GameInfo, SeatStats, Step
from referee.faults import FaultKind, FaultNotice, bounded
from referee.rules.chance import seat_seed
from referee.rules.core import CHANCE, Action, Decision, Event, Outcome, Variant
from referee.rules.transcript import Playthrough, Transcript

INF = float("inf")
MAX_FAULT_STEPS = 64
"""Fault steps kept per seat in a transcript's ``meta.fault_steps``."""

fault_log = logging.getLogger("referee.faults")
"""One JSON line per fault: match, seat, entrant, kind, request and reason (never a token)."""


@dataclass(frozen=True, slots=True)
class TimeControl:
    """Per-decision time plus a per-seat bank, like a chess clock with increments."""

    decision_ms: int = 2000
    bank_ms: int = 10_000
    connect_ms: int = 15_000
    """How long a match waits for a seat's bot to connect before defaulting it."""

    def __post_init__(self) -> None:
        if self.decision_ms < 1 or self.bank_ms < 0 or self.connect_ms < 0:
            raise ValueError(f"bad time control: {self}")


@dataclass(frozen=True, slots=True)
class FaultPolicy:
    """When faults make a seat forfeit."""

    max_faults: int = 25
    """A seat with more faults than this forfeits: its later decisions are defaulted unasked."""
    send_events: bool = True


@dataclass(slots=True)
class MatchReport:
    """A finished match: the outcome, the transcript and every seat's statistics."""

    match_id: str
    outcome: Outcome
    transcript: Transcript
    seats: list[SeatStats]


Listener = Callable[[int, Sequence[Event]], None]


class MatchObserver(Protocol):
    """What the driver reports while it plays, for metrics.

    The server passes one that feeds Prometheus, so the driver itself imports no metrics library;
    without one the driver reports to a :class:`NullObserver`. The methods run on the event loop
    and must be cheap and never raise. A protocol, not a base class: the driver may be compiled
    (``referee.accel``), and an interpreted class cannot subclass a compiled one.
    """

    def decided(self, variant: str, seconds: float) -> None:
        """A bot replied to a decision request ``seconds`` after it was asked (legal or not)."""

    def faulted(self, variant: str, kind: FaultKind) -> None:
        """A seat was charged a fault of ``kind``."""


class NullObserver:
    """A :class:`MatchObserver` that ignores everything."""

    def decided(self, variant: str, seconds: float) -> None:
        pass

    def faulted(self, variant: str, kind: FaultKind) -> None:
        pass


_configs: dict[Any, dict[str, Any]] = {}


def _config_json(variant: Variant[Any, Any]) -> dict[str, Any]:
    """The variant's config as JSON, one object for every match of the same config (the game
    starts then encode it once, not once per match); read-only."""
    try:
        found = _configs.get(variant.config)
    except TypeError:  # a config that does not hash
        return variant.config_json()
    if found is None:
        if len(_configs) >= 256:
            _configs.clear()
        found = _configs[variant.config] = variant.config_json()
    return found


class MatchDriver:
    """Plays one match between linked bots."""

    def __init__(
        self,
        match_id: str,
        variant: Variant[Any, Any],
        seed: int,
        links: Sequence[EntrantLink],
        *,
        time_control: TimeControl | None = None,
        policy: FaultPolicy | None = None,
        seat_key: bytes = b"",
        observer: MatchObserver | None = None,
    ) -> None:
        if len(links) != variant.players:
            raise ValueError(f"{variant.name} needs {variant.players} seats, got {len(links)} links")
        self.match_id = match_id
        self.variant = variant
        self.game = Playthrough(variant, seed)
        self.links = list(links)
        self.time = time_control or TimeControl()
        self.policy = policy or FaultPolicy()
        self.observer = observer or NullObserver()
        self.seats = [
            SeatStats(link.entrant, on_fault=functools.partial(self._faulted, seat))
            for seat, link in enumerate(links)
        ]
        for stats in self.seats:
            stats.bank_seconds = self.time.bank_ms / 1000
        self.fault_steps: list[list[dict[str, Any]]] = [[] for _ in links]
        """Per seat: the step each fault happened at (the replay frame that applies the decision
        it is about) and its kind, for the transcript's ``meta.fault_steps`` (a match page links
        each fault there); at most MAX_FAULT_STEPS a seat."""
        self.listeners: list[Listener] = []
        self.history: list[tuple[int, tuple[Event, ...]]] = []
        self.report: MatchReport | None = None
        self._absent: set[int] = set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wakeup: asyncio.Future[tuple[Decision, ...]] | None = None
        """What :meth:`run` sleeps on while the callbacks play the steps."""
        self._step: Step | None = None
        self._asked: dict[int, tuple[int, float, float, Decision]] = {}
        """The current step's seats: seat → (request id, time asked, deadline, decision)."""
        self._actions: dict[int, Action] = {}
        self._timer: Deadline | asyncio.TimerHandle | None = None
        """The match's one entry in the loop's deadline queue, kept across steps (see :meth:`_arm`)."""
        self._timer_at = 0.0
        """When :attr:`_timer` fires."""
        self._due = INF
        """The earliest deadline of the current step's seats that have not answered (INF: none)."""
        self._deadlines: Deadlines | None = None
        self._view = variant.view
        self._decision_s = self.time.decision_ms / 1000
        self._event_links = list(dict.fromkeys(self.links))
        """Each link once: a link holding several seats gets a step's events once."""
        self._connected = False
        """Every seat's bot has connected once: no step waits for a first connection any more."""
        names = tuple(link.entrant for link in links)
        config = _config_json(variant)
        for seat, link in enumerate(self.links):
            info = GameInfo(match_id, seat, variant.name, config, seat_seed(seed, seat, seat_key), names)
            link.register(info, self.seats[seat])

    async def run(self) -> MatchReport:
        """Play the match to the end and return its report.

        Steps are played on from the callbacks that complete them (the last answer of a step,
        or its deadline's timer), without waking this coroutine: it sleeps until the game is over
        or a step needs to wait for a bot's first connection, which it waits for itself.
        """
        # The bots connect after the matches are created: deal once they are there (or their
        # connect window is over), so the first public events reach them.
        for link in dict.fromkeys(self.links):  # one after another: no task per link and match
            await link.wait_attached()
        game = self.game
        loop = asyncio.get_running_loop()
        self._loop = loop
        self._deadlines = deadlines(loop)
        while True:
            pending = self._play_on()
            if pending is None:  # a step waits for its bots: its callbacks play on from there
                self._wakeup = loop.create_future()
                try:
                    pending = await self._wakeup
                except asyncio.CancelledError:
                    self._halt()
                    raise
            if not pending:
                break
            actions = await self._collect(pending)  # a bot may still connect: wait for it here
            self._publish(game.apply(actions))
        self._halt()  # the deadline entry kept across steps is not needed any more
        outcome = game.outcome()
        assert outcome is not None
        for seat, link in enumerate(self.links):
            link.finish(self.match_id, seat, outcome)
        meta = {
            "match_id": self.match_id,
            "seats": [link.entrant for link in self.links],
            "faults": [{k.value: v for k, v in s.faults.items()} for s in self.seats],
            "defaulted": [s.defaulted for s in self.seats],
            "forfeited": [s.forfeited for s in self.seats],
            "fault_steps": self.fault_steps,
        }
        self.report = MatchReport(self.match_id, outcome, game.transcript(meta), self.seats)
        return self.report

    def _play_on(self) -> tuple[Decision, ...] | None:
        """Play steps for as long as none has to wait: chance, and steps whose seats are all
        defaulted at once. ``None``: a step waits for its bots' answers (the last answer or a
        deadline plays on, :meth:`_answered`, :meth:`_expired`); otherwise the pending decisions
        of a step that waits for a bot's first connection, or ``()`` when the game is over."""
        game = self.game
        while pending := game.pending():
            if pending[0].seat == CHANCE:
                self._publish(game.resolve_chance())
                continue
            if self._awaits_connection(pending):
                return pending
            if not self._ask(pending):
                return None
            self._publish(game.apply(self._actions))
        return pending

    def _awaits_connection(self, pending: tuple[Decision, ...]) -> bool:
        """Whether a seat to ask has a bot that has not connected yet and still may."""
        if self._connected:
            return False
        if all(link.ever_connected for link in self.links):
            self._connected = True
            return False
        assert self._loop is not None
        for decision in pending:
            seat = decision.seat
            link = self.links[seat]
            if (
                link.outbox is None
                and not link.ever_connected
                and link.connect_deadline > self._loop.time()
                and seat not in self._absent
                and not self.seats[seat].forfeited
                and self.seats[seat].total_faults <= self.policy.max_faults
            ):
                return True
        return False

    def _ask(self, pending: tuple[Decision, ...]) -> bool:
        """Ask every pending seat of a step (as :meth:`_collect` does, with nothing to wait for
        before asking); ``True`` when every action is known at once."""
        loop = self._loop
        assert loop is not None
        actions: dict[int, Action] = {}
        asked: dict[int, tuple[int, float, float, Decision]] = {}
        step = Step(self._answered, loop)
        step.notify = None  # no playing on while the step is still being asked
        now = loop.time()  # one time for every seat of the step: they are asked at once
        links, seats, absent, state = self.links, self.seats, self._absent, self.game.state
        max_faults, decision_ms, decision_s = self.policy.max_faults, self.time.decision_ms, self._decision_s
        for decision in pending:
            seat = decision.seat
            stats = seats[seat]
            link = links[seat]
            if (
                link.outbox is not None
                and stats.total_faults <= max_faults
                and not stats.forfeited
                and seat not in absent
            ):  # the common case, as _ask_seat asks it
                bank = stats.bank_seconds
                view = self._view(state, seat)
                request_id = link.ask(
                    step, self.match_id, seat, decision, view, decision_ms, int(bank * 1000)
                )
                asked[seat] = (request_id, now, now + decision_s + bank, decision)
            elif not self._defaulted_at_once(decision, actions):
                # Not attached, it will not connect any more (_awaits_connection).
                self._ask_seat(decision, link.outbox is not None, step, asked, actions, now)
        self._actions, self._asked, self._step = actions, asked, step
        if not asked:
            return True
        if not step.missing:  # every asked seat answered already (defaulted by its link)
            self._sweep(loop.time())
            return True
        step.notify = self._answered
        self._arm()
        return False

    def _arm(self) -> None:
        """The step's deadline: the earliest of a seat that has not answered.

        The match keeps one entry in the loop's deadline queue (:mod:`referee.driver.clock`)
        across its steps rather than one per step: a step answered in time leaves it armed, and
        when it fires before the current step's deadline (:meth:`_expired`) it is armed again at
        that deadline. A step costs no timer, no queue entry and no cancellation.
        """
        assert self._deadlines is not None and self._step is not None
        missing = self._step.missing
        due = min([entry[2] for seat, entry in self._asked.items() if seat in missing])
        self._due = due
        timer = self._timer
        if timer is not None:
            if self._timer_at <= due:
                return  # fires first: it looks at the step then and arms again
            timer.cancel()  # an earlier deadline (a seat's bank spent): armed anew
        self._timer = self._deadlines.at(due, self._expired)
        self._timer_at = due

    def _defaulted_at_once(self, decision: Decision, actions: dict[int, Action]) -> bool:
        """A forfeited or absent seat gets its default action without being asked."""
        seat = decision.seat
        stats = self.seats[seat]
        if stats.total_faults > self.policy.max_faults:
            stats.forfeited = True  # faults the link counts (protocol, crash) forfeit too
        if stats.forfeited or seat in self._absent:
            actions[seat] = self._default(decision, None)
            return True
        return False

    def _ask_seat(
        self,
        decision: Decision,
        attached: bool,
        step: Step,
        asked: dict[int, tuple[int, float, float, Decision]],
        actions: dict[int, Action],
        now: float,
    ) -> None:
        """Send a seat its request in ``step`` (recorded in ``asked``), or, when its bot is not
        attached (and will not be), give it its default action (and a fault if it never came)."""
        seat = decision.seat
        stats = self.seats[seat]
        link = self.links[seat]
        if not attached:
            if not link.ever_connected:
                self._absent.add(seat)
                self._fault(
                    seat, FaultKind.DISCONNECT, f"the bot did not connect within {self.time.connect_ms} ms"
                )
            actions[seat] = self._default(decision, None)
            return
        bank = stats.bank_seconds
        view = self._view(self.game.state, seat)
        request_id = link.ask(
            step, self.match_id, seat, decision, view, self.time.decision_ms, int(bank * 1000)
        )
        asked[seat] = (request_id, now, now + self._decision_s + bank, decision)

    def _sweep(self, now: float) -> bool:
        """Settle the answered seats and time out the expired ones; ``True`` when none is left."""
        assert self._step is not None
        return self._settle_step(now, self._asked, self._step, self._actions)

    def _settle_step(
        self,
        now: float,
        asked: dict[int, tuple[int, float, float, Decision]],
        step: Step,
        actions: dict[int, Action],
    ) -> bool:
        """Of the seats ``asked`` in ``step``: settle the answered ones into ``actions`` and time
        out the expired ones (their default action); ``True`` when none is left."""
        results = step.results
        if not step.missing and len(results) == len(asked):  # every seat answered: none expired
            seats, decision_s, variant = self.seats, self._decision_s, self.variant.name
            decided = self.observer.decided
            for seat, (request_id, start, _, decision) in asked.items():
                value, answered = results[seat]
                took = answered - start
                if took <= decision_s and value.__class__ is not Defaulted and value in decision.options:
                    stats = seats[seat]  # a legal answer in time, settled as _settle settles it
                    stats.think_seconds += took
                    decided(variant, took)
                    stats.decisions += 1
                    actions[seat] = value
                else:
                    actions[seat] = self._settle(seat, request_id, decision, value, took)
            asked.clear()
            return True
        for seat, (request_id, start, deadline, decision) in list(asked.items()):
            if seat in results:
                del asked[seat]
                value, answered = results[seat]
                actions[seat] = self._settle(seat, request_id, decision, value, answered - start)
            elif now >= deadline:
                del asked[seat]
                step.missing.discard(seat)
                self.links[seat].forget(request_id)
                stats = self.seats[seat]
                stats.think_seconds += now - start
                reason = (
                    f"no answer within {self.time.decision_ms} ms"
                    f" and the {round(stats.bank_seconds * 1000)} ms left in the time bank"
                )
                stats.bank_seconds = 0.0
                self._fault(seat, FaultKind.TIMEOUT, reason, request_id)
                actions[seat] = self._default(decision, None)
        return not asked

    def _answered(self) -> None:
        """Every seat of the step answered (called by the step, from the reader's delivery).

        The deadline entry stays armed for the next steps (:meth:`_arm`)."""
        self._due = INF
        self._go_on()

    def _expired(self) -> None:
        """The match's deadline entry fired: the current step's earliest deadline passed, or the
        entry was armed for an earlier step and is armed again at this step's deadline."""
        self._timer = None
        due = self._due
        if due == INF:
            return  # no step waits: the next one arms it
        if due > self._timer_at:
            assert self._deadlines is not None
            wakeup = self._wakeup
            if wakeup is not None and not wakeup.done():
                self._timer = self._deadlines.at(due, self._expired)
                self._timer_at = due
            return
        self._go_on()

    def _go_on(self) -> None:
        """Finish the current step if it can be, and play on; wake :meth:`run` when it must
        take over (the game is over, a bot's connection to wait for, or an error)."""
        assert self._loop is not None
        wakeup = self._wakeup
        if wakeup is None or wakeup.done():
            return
        try:
            if not self._sweep(self._loop.time()):
                self._arm()
                return
            self._due = INF
            self._publish(self.game.apply(self._actions))
            pending = self._play_on()
        except BaseException as exc:  # a referee bug ends this match only, in run()
            self._halt()
            wakeup.set_exception(exc)
            return
        if pending is not None:
            wakeup.set_result(pending)

    def _halt(self) -> None:
        """Stop playing on from callbacks (the match was cancelled or failed)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._step is not None:
            self._step.notify = None

    def _publish(self, events: tuple[Event, ...]) -> None:
        if not events:
            return
        step = len(self.game.steps)
        self.history.append((step, events))
        for listener in self.listeners:
            listener(step, events)
        if self.policy.send_events:
            for link in self._event_links:
                link.publish(self.match_id, step, events)

    async def _collect(self, pending: tuple[Decision, ...]) -> dict[int, Action]:
        """One action per pending seat: the bot's, or the default with a fault."""
        loop = asyncio.get_running_loop()
        actions: dict[int, Action] = {}
        step = Step()
        asked: dict[int, tuple[int, float, float, Decision]] = {}
        """seat → (request id, time asked, deadline, decision)."""
        for decision in pending:
            if not self._defaulted_at_once(decision, actions):
                link = self.links[decision.seat]
                attached = link.outbox is not None or await link.wait_attached()
                self._ask_seat(decision, attached, step, asked, actions, loop.time())
        while asked:
            waiting = [asked[seat][2] for seat in step.missing if seat in asked]
            if waiting:
                timer = loop.call_at(min(waiting), step.wake)
                assert step.future is not None
                await step.future
                timer.cancel()
                step.rearm()
            self._settle_step(loop.time(), asked, step, actions)
        return actions

    def _settle(
        self, seat: int, request_id: int, decision: Decision, value: Action | Defaulted, took: float
    ) -> Action:
        stats = self.seats[seat]
        stats.think_seconds += took
        over = took - self._decision_s
        if over > 0:
            stats.bank_seconds = max(0.0, stats.bank_seconds - over)
        if isinstance(value, Defaulted):
            return self._default(decision, None)
        self.observer.decided(self.variant.name, took)
        if value not in decision.options:
            options = ", ".join(map(str, decision.options[:12])) + (
                ", …" if len(decision.options) > 12 else ""
            )
            reason = bounded(
                f"{value!r} is not a legal {decision.kind.value} decision (options: {options})", 300
            )
            self._fault(seat, FaultKind.ILLEGAL, reason, request_id)
            return self._default(decision, None)
        stats.decisions += 1
        return value

    def _default(self, decision: Decision, fault: FaultKind | None) -> Action:
        seat = decision.seat
        if fault is not None:
            self._fault(seat, fault)
        self.seats[seat].defaulted += 1
        return self.variant.default_action(self.game.state, decision)

    def _fault(self, seat: int, kind: FaultKind, reason: str = "", request_id: int = 0) -> None:
        self.seats[seat].fault(kind, reason, request_id)

    def _faulted(self, seat: int, stats: SeatStats, kind: FaultKind, reason: str, request_id: int) -> None:
        """Every fault of a seat, wherever it is counted: forfeit, metrics, the log, the bot."""
        if stats.total_faults > self.policy.max_faults:
            stats.forfeited = True
        self.observer.faulted(self.variant.name, kind)
        if len(self.fault_steps[seat]) < MAX_FAULT_STEPS:
            # The step being decided is the next one applied: replay frame len(steps) + 1 shows it.
            self.fault_steps[seat].append({"step": len(self.game.steps) + 1, "kind": kind.value})
        reason = bounded(reason or kind.value)
        fault_log.info(
            json.dumps(
                {
                    "event": "fault",
                    "match": self.match_id,
                    "seat": seat,
                    "entrant": stats.entrant,
                    "kind": kind.value,
                    "request": request_id,
                    "reason": reason,
                }
            )
        )
        self.links[seat].notify(FaultNotice(kind, self.match_id, seat, request_id, reason))
