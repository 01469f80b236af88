"""A person's seat: the same protocol as any bot, with the page as its brain.

The seat plays through the SDK's runner (:func:`bot_sdk.runner.run`, on a thread of its own): a
``Play`` stream to the referee like any bot's, with the same Hello, time control and faults. Its
bot's ``decide`` publishes the decision (the view exactly as the referee sent it, the options,
the clock) and waits for the person's choice, which the page sends with :meth:`Seat.choose`. The
page follows the seat with :meth:`Seat.wait` (a long poll): every change bumps
:attr:`Seat.version`. Everything lives here, not in the page, so a reload resumes the game.

A seat whose page has not asked for anything for ``grace_s`` seconds while its game runs (the tab
was closed, the connection lost) ends its stream: the referee charges a disconnect fault and
plays the seat's default actions from then on, as for any bot that leaves.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from bot_sdk.bot import Bot
from bot_sdk.runner import NO_REPLY, Asked, RunnerError, Stopper, run
from dashboard.replay import board, describe_all, option_labels, renderer
from referee.faults import FaultKind, FaultNotice
from referee.rules.core import Action, Event, Outcome, View, event_to_json
from referee.rules.registry import make_variant

HUMAN_PREFIX = "human:"
"""A person's seat is named ``human:NAME`` in the transcript's seat names (its entrant name)."""

MAX_NAME = 32
"""The longest name a person may give."""

MAX_NOTICES = 5
"""The latest notices (faults, a stream that ended) a state keeps."""

LATE_MARGIN_S = 1.0
"""How long past its deadline and bank a decision still waits for the page: the referee has timed
it out by then (and plays its default action), so the seat sends nothing and moves on to the
referee's next message."""


SETTLE_S = 0.05
"""How long a change that is on its way to another (a choice made, the others' turn) may wait for it
before a waiting page gets it."""


class SeatError(ValueError):
    """A choice the seat refuses: not the pending request, or not one of its options."""


def human_name(name: str) -> str:
    """The entrant name of a person called ``name`` (``human:NAME``); :class:`SeatError` for a name
    that is empty, too long, not printable, or holds a comma (names are given as a list)."""
    clean = name.strip()
    if not clean or len(clean) > MAX_NAME or not clean.isprintable() or "," in clean:
        raise SeatError(
            f"a player's name is 1 to {MAX_NAME} printable characters without commas, not {name!r}"
        )
    return HUMAN_PREFIX + clean


class Seat:
    """One person's seat at a table, game after game (each game is its own stream)."""

    def __init__(self, entrant: str, *, grace_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.entrant = entrant
        """The seat's entrant name (``human:NAME``): its name in the transcript."""
        self.grace_s = grace_s
        self._clock = clock
        self._changed = threading.Condition()
        self.version = 0
        self.info: dict[str, Any] = {}
        """What the table adds to the state (the game's number, the replay's address …): see :meth:`tell`."""
        self._reset()
        self._seen: float | None = None
        self._shut = False
        self._stopper: Stopper | None = None
        self._runner: threading.Thread | None = None
        self._connect: tuple[str, str] | None = None
        """The current game's referee and token, for a rejoin."""
        self._watchdog = threading.Thread(target=self._watch, name=f"seat-{entrant}", daemon=True)
        self._watchdog.start()

    def _reset(self) -> None:
        self.status = "waiting"
        self.variant = ""
        self.seat = -1
        self.names: tuple[str, ...] = ()
        self.bulls: tuple[int, ...] | None = None
        self.view: dict[str, Any] | None = None
        self.events: list[Event] = []
        self.asked: Asked | None = None
        self.options: list[Action] = []
        self.labels: list[str] = []
        self.kind = ""
        self.chosen: Action | None = None
        self.notices: list[str] = []
        self.result: dict[str, Any] | None = None
        self.ended = False
        """The current game's stream has ended (a disconnect: the page was gone)."""
        self.rejoinable = False
        """It ended because the page was gone: a page that comes back connects the seat again."""
        self._rejoining = False

    # -- the table's side -----------------------------------------------------------------------

    def play(self, referee: str, token: str) -> threading.Thread:
        """Connect to ``referee`` with ``token`` on a thread of its own and play its games."""
        with self._changed:
            self._reset()
            self._connect = (referee, token)
            return self._connected(Stopper())

    def _connected(self, stopper: Stopper) -> threading.Thread:
        """Called with the lock held: start the stream of the current game on its own thread."""
        assert self._connect is not None
        if self._shut:
            # Shut before its game came (a table closed while it started the game): the stream
            # says goodbye as soon as it starts, and the referee plays the seat's defaults, rather
            # than waiting out each of its decisions for a person who is not there any more.
            stopper.stop("the table closed")
        self._stopper = stopper
        self._bump()
        thread = threading.Thread(
            target=self._run, args=(*self._connect, stopper), name=f"seat-run-{self.entrant}", daemon=True
        )
        self._runner = thread
        thread.start()
        return thread

    def _run(self, referee: str, token: str, stopper: Stopper) -> None:
        try:
            run(lambda: _Person(self), referee=referee, token=token, name=self.entrant, stopper=stopper)
        except RunnerError as exc:
            with self._changed:
                self._notice(f"the connection to the referee ended: {exc}")
                self._bump()

    def tell(self, **info: Any) -> None:
        """Add ``info`` to the state the page gets (the table's own fields: ``game``, ``games``,
        ``replay`` …)."""
        with self._changed:
            self.info.update(info)
            self._bump()

    def over(self, result: Mapping[str, Any], **info: Any) -> None:
        """The game is over with ``result`` (the outcome's JSON), as the table learnt it from the
        referee: a seat that left before the end learns it here (the others have it already);
        ``info`` as for :meth:`tell` (the replay's address)."""
        with self._changed:
            if self.result is None:
                self.result = dict(result)
            self.status = "over"
            self.info.update(info)
            self._bump()

    def leave(self, reason: str) -> None:
        """End the current game's stream (the referee charges a disconnect fault if it still runs)."""
        with self._changed:
            stopper = self._stopper
            if self.status != "over":
                self.ended = True
                self._notice(f"your seat left the game: {reason}")
            self._bump()
        if stopper is not None:
            stopper.stop(reason)

    def shut(self) -> None:
        """Stop for good: the stream, the watchdog, every waiting page."""
        with self._changed:
            self._shut = True
            self._bump()
            stopper, runner = self._stopper, self._runner
        if stopper is not None:
            stopper.stop("the table closed")
        if runner is not None:
            runner.join(10)
        self._watchdog.join(10)

    # -- the page's side ------------------------------------------------------------------------

    def seen(self) -> None:
        """A page of this seat asked for something: it is still there. A seat whose stream ended
        because its page was gone connects again, as a bot that reconnects: the referee replays
        the game's start to it and asks it the next decisions."""
        with self._changed:
            self._seen = self._clock()
            runner = self._runner
            if (
                self.rejoinable
                and self.status != "over"
                and not self._shut
                and (runner is None or not runner.is_alive())
            ):
                self.ended = self.rejoinable = False
                self._rejoining = True
                self._connected(Stopper())

    @property
    def last_seen(self) -> float | None:
        """When a page last asked for this seat (the seat's clock), or None: no page yet."""
        return self._seen

    def wait(self, after: int | None, timeout: float) -> dict[str, Any]:
        """The state once its version is not ``after`` (at once when ``after`` is None), or after
        ``timeout`` seconds, whichever comes first."""
        self.seen()
        with self._changed:
            if after is not None and self._changed.wait_for(
                lambda: self.version != after or self._shut, timeout
            ):
                # A choice sets off a burst of changes (the choice, the step's events, the next
                # decision) when the others answer at once: one answer for the burst, not one each.
                self._changed.wait_for(lambda: self._settled() or self._shut, SETTLE_S)
            state = self._state()
        self.seen()
        return state

    def _settled(self) -> bool:
        """Whether the state is one a page waits in: a decision to make, the others' turn for
        longer than :data:`SETTLE_S`, the game over or left."""
        return not (self.status == "playing" or (self.status == "deciding" and self.chosen is not None))

    def state(self) -> dict[str, Any]:
        """Everything the page shows, JSON-ready (see docs/play.md)."""
        with self._changed:
            return self._state()

    def choose(self, request_id: int, index: int) -> dict[str, Any]:
        """Answer the pending request ``request_id`` with its option number ``index`` (from 0)."""
        self.seen()
        with self._changed:
            asked = self.asked
            if asked is None or self.chosen is not None:
                raise SeatError(f"request {request_id} is not pending: there is no decision to make now")
            if request_id != asked.request_id:
                raise SeatError(f"request {request_id} is not pending: the pending one is {asked.request_id}")
            if not 0 <= index < len(self.options):
                raise SeatError(f"no option {index}: the decision has options 0 to {len(self.options) - 1}")
            self.chosen = self.options[index]
            self._bump()
            return {"ok": True, "request_id": request_id, "option": _plain(self.chosen)}

    # -- the bot's side (on the runner's thread) ------------------------------------------------

    def _start(self, seat: int, variant: str, config: Mapping[str, Any]) -> None:
        with self._changed:
            if self._rejoining:  # the referee replayed the game's start to the seat's new stream
                self._rejoining = False
                self._notice("your page is back: your seat joined the game again")
            self.status, self.seat, self.variant = "playing", seat, variant
            hook = getattr(renderer(variant), "bulls", None)
            self.bulls = None if hook is None else hook(make_variant(variant, dict(config)))
            self._bump()

    def _events(self, events: Sequence[Event]) -> None:
        with self._changed:
            self.events.extend(events)
            self._bump()

    def _asked(self, asked: Asked) -> None:
        with self._changed:
            self.asked = asked
            if asked.seat_names:
                self.names = asked.seat_names

    def _decide(self, view: View) -> Any:
        """The page's choice, or :data:`NO_REPLY` once the clock has run out (the referee has
        played the default action) or the seat has left."""
        asked = self.asked
        if asked is None:  # the runner always tells first
            return NO_REPLY
        with self._changed:
            self.view = view.to_json()
            decision = self.view.get("decision") or {}
            self.options = list(getattr(view, "decision").options)  # noqa: B009 - every view has one
            self.labels = option_labels(self.variant, self.view, self.options, self.names)
            self.chosen = None
            self.status = "deciding"
            self.kind = str(decision.get("kind", ""))
            self._bump()
            until = asked.received + (asked.deadline_ms + asked.time_bank_ms) / 1000 + LATE_MARGIN_S
            while self.chosen is None and not self.ended and not self._shut:
                left = until - self._clock()
                if left <= 0:
                    break
                self._changed.wait(left)
            chosen = self.chosen
            self.asked, self.options, self.labels, self.chosen = None, [], [], None
            self.status = "playing"
            if chosen is not None:
                self.events = []  # the page shows what happens from this choice on
            self._bump()
            return NO_REPLY if chosen is None else chosen

    def _fault(self, notice: FaultNotice) -> None:
        with self._changed:
            if notice.kind is FaultKind.TIMEOUT:
                self._notice("your time ran out: the referee played the default action for you")
            else:
                self._notice(f"the referee recorded a fault ({notice.kind.value}): {notice.reason}")
            self._bump()

    def _over(self, outcome: Outcome) -> None:
        with self._changed:
            self.status = "over"
            self.result = outcome.to_json()
            self._bump()

    # -- inside ---------------------------------------------------------------------------------

    def _notice(self, text: str) -> None:
        self.notices = [*self.notices[-(MAX_NOTICES - 1) :], text]

    def _bump(self) -> None:
        """Called with the lock held: a change every waiting page gets."""
        self.version += 1
        self._changed.notify_all()

    def _watch(self) -> None:
        """End the stream of a running game whose page has been gone for ``grace_s``."""
        step = max(0.05, min(0.5, self.grace_s / 4))
        with self._changed:
            while not self._shut:
                self._changed.wait(step)
                playing = self.status in ("playing", "deciding") and not self.ended
                gone = self._seen is not None and self._clock() - self._seen > self.grace_s
                if playing and gone and self._stopper is not None:
                    self.ended = self.rejoinable = True
                    self._notice(f"no page for {self.grace_s:g} s: your seat left the game")
                    self._bump()
                    stopper = self._stopper
                    self._changed.release()
                    try:
                        stopper.stop(f"the person's page was gone for {self.grace_s:g} s")
                    finally:
                        self._changed.acquire()

    def _state(self) -> dict[str, Any]:
        decision = None
        clock = None
        if self.asked is not None and self.status == "deciding":
            asked = self.asked
            decision = {
                "request_id": asked.request_id,
                "kind": self.kind,
                "options": [_plain(o) for o in self.options],
                "labels": list(self.labels),
                "chosen": None if self.chosen is None else self.options.index(self.chosen),
            }
            spent = (self._clock() - asked.received) * 1000
            clock = {
                "decision_ms": asked.deadline_ms,
                "bank_ms": asked.time_bank_ms,
                "decision_left_ms": max(0, round(asked.deadline_ms - spent)),
                "bank_left_ms": max(0, round(asked.time_bank_ms - max(0.0, spent - asked.deadline_ms))),
            }
        laid = None
        if self.view is not None:
            frame = {
                "variant": self.variant,
                "seat": self.seat,
                "view": self.view,
                "events": [event_to_json(e) for e in self.events],
            }
            laid = board(frame, self.names)
        scores = (self.result or {}).get("scores") or (self.view or {}).get("scores")
        return {
            "version": self.version,
            "entrant": self.entrant,
            "status": "ended" if self.ended and self.status != "over" else self.status,
            "variant": self.variant,
            "seat": self.seat,
            "names": list(self.names),
            "view": self.view,
            "board": laid,
            "bulls": None if self.bulls is None else list(self.bulls),
            "lines": describe_all(self.events, self.names, self.variant),
            "decision": decision,
            "clock": clock,
            "scores": None if scores is None else list(scores),
            "notices": list(self.notices),
            "result": self.result,
            "closed": self._shut,
            **self.info,
        }


class _Person(Bot):
    """The bot object of one game of a :class:`Seat`: every call goes to the seat."""

    def __init__(self, seat: Seat) -> None:
        self._seat = seat

    def on_start(self, seat: int, variant: str, config: dict[str, Any]) -> None:
        self._seat._start(seat, variant, config)

    def on_asked(self, asked: Asked) -> None:
        self._seat._asked(asked)

    def decide(self, view: View) -> Action:
        return self._seat._decide(view)  # type: ignore[no-any-return] # NO_REPLY: nothing to send

    def on_events(self, events: Sequence[Event]) -> None:
        self._seat._events(events)

    def on_fault(self, notice: FaultNotice) -> None:
        self._seat._fault(notice)

    def on_game_over(self, outcome: Outcome) -> None:
        self._seat._over(outcome)


def _plain(option: Any) -> Any:
    return [_plain(o) for o in option] if isinstance(option, tuple | list) else option
