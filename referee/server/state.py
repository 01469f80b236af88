"""The referee's state: matches being played or finished, and the entrant links by token."""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from referee.driver import EntrantLink, FaultPolicy, MatchDriver, MatchReport, StandingLink, TimeControl
from referee.rules.core import Variant
from referee.rules.errors import ConfigError, RulesError
from referee.rules.registry import make_variant
from referee.server import metrics
from referee.server.results import FinishedResults, result_to_wire
from referee.wire import codec
from sixnimmt.v1 import game_pb2


class UnknownMatchError(LookupError):
    """No match with that id (never created, or its result was dropped)."""


class UnknownTokenError(PermissionError):
    """A Hello presented a token the referee never issued (or whose matches are over)."""


@dataclass(frozen=True, slots=True)
class MatchRequest:
    """One match to create, as an admin asks for it."""

    variant: str
    config: dict[str, Any]
    seed: int
    entrants: tuple[str, ...]


@dataclass(slots=True)
class MatchEntry:
    """A created match: its driver, its task and, once over, its report."""

    driver: MatchDriver
    task: asyncio.Task[MatchReport] | None = None
    done: asyncio.Event = field(default_factory=asyncio.Event)
    error: str = ""

    @property
    def status(self) -> str:
        """waiting, running, finished or aborted."""
        if self.error:
            return "aborted"
        if self.done.is_set():
            return "finished"
        return "running" if self.driver.game.steps else "waiting"


def parse_config(text: str) -> dict[str, Any]:
    """A match config from its JSON text; malformed JSON is a :class:`ConfigError`."""
    if not text.strip():
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"config is not JSON: {exc}") from exc
    if not isinstance(value, dict):
        raise ConfigError("config must be a JSON object")
    return value


CREATE_CHUNK = 32
"""Matches set up per turn of the event loop when a CreateMatches holds many (≈ 3 ms of work)."""


def validate(requests: Sequence[MatchRequest]) -> list[Variant[Any, Any]]:
    """Each request's variant, or a :class:`ConfigError` naming the first bad request."""
    variants = []
    for number, request in enumerate(requests):
        try:
            variant = make_variant(request.variant, request.config)
            codec(variant.name)
        except RulesError as exc:
            raise ConfigError(f"match {number}: {exc}") from exc
        if len(request.entrants) != variant.players:
            raise ConfigError(
                f"match {number}: {variant.name} with this config seats {variant.players},"
                f" got {len(request.entrants)} entrants"
            )
        if any(not e for e in request.entrants):
            raise ConfigError(f"match {number}: entrant names must not be empty")
        variants.append(variant)
    return variants


class RefereeState:
    """All matches and links of one referee process."""

    def __init__(self, *, keep_results: int = 10_000, keep_results_bytes: int = 256 << 20) -> None:
        self.matches: dict[str, MatchEntry] = {}
        """The matches being played (a finished one's driver is dropped: see :attr:`results`)."""
        self.results = FinishedResults(keep_results, keep_results_bytes)
        """Finished matches' results, serialized, the latest within the bounds."""
        self.links: dict[str, EntrantLink | StandingLink] = {}
        """Token → the link a bot connects to: a set of matches' entrant, or a standing one."""
        self.keep_results = keep_results

    def open_standing(self, name: str) -> StandingLink:
        """A standing entrant: a token whose connection outlives its matches (``OpenStanding``)."""
        token = secrets.token_hex(24)
        standing = StandingLink(name or "standing", token)
        self.links[token] = standing
        return standing

    def close_standing(self, tokens: Sequence[str], reason: str = "") -> int:
        """Release standing tokens (``CloseStanding``); returns how many were open."""
        closed = 0
        for token in tokens:
            standing = self.links.get(token)
            if isinstance(standing, StandingLink) and standing.closing is None:
                standing.close(reason or "released")
                closed += 1
                self.release(standing)
        return closed

    def _standing(self, standing: dict[str, str]) -> dict[str, StandingLink]:
        found = {}
        for entrant, token in standing.items():
            link = self.links.get(token)
            if not isinstance(link, StandingLink) or link.closing is not None:
                raise ConfigError(f"entrant {entrant!r}: unknown or closed standing token")
            found[entrant] = link
        return found

    async def create(
        self,
        requests: Sequence[MatchRequest],
        time_control: TimeControl,
        policy: FaultPolicy,
        seat_key: bytes = b"",
        standing: dict[str, str] | None = None,
    ) -> tuple[list[str], list[EntrantLink]]:
        """Validate every request, then create all matches (or none) and start them.

        ``seat_key`` keys the bots' seat seeds; empty means a fresh random key. ``standing``
        maps entrant names to standing tokens (:meth:`open_standing`): those entrants' seats are
        played over the standing connection (each such link has ``standing`` set). Validation runs
        in a worker thread and the matches are set up a few at a time, so a big request never
        holds the event loop (and the running matches' decisions) for long.
        """
        if len(seat_key) > 64:
            raise ConfigError("seat_seed_key holds at most 64 bytes")
        seat_key = seat_key or os.urandom(32)
        if not requests:
            raise ConfigError("no matches to create")
        variants = await asyncio.to_thread(validate, requests)
        standing_links = self._standing(standing or {})
        loop = asyncio.get_running_loop()
        deadline = loop.time() + time_control.connect_ms / 1000
        links: dict[str, EntrantLink] = {}
        for request in requests:
            for entrant in request.entrants:
                if entrant not in links:
                    token = secrets.token_hex(24)  # no "-" first: a token must pass as --token X
                    links[entrant] = EntrantLink(entrant, token, deadline)
                    if entrant in standing_links:
                        standing_links[entrant].join(links[entrant])  # its token is never handed out
                    else:
                        self.links[token] = links[entrant]
        ids = []
        for number, (request, variant) in enumerate(zip(requests, variants, strict=True)):
            if number and number % CREATE_CHUNK == 0:
                await asyncio.sleep(0)  # let running matches take their turns
            match_id = uuid.uuid4().hex
            driver = MatchDriver(
                match_id,
                variant,
                request.seed,
                [links[e] for e in request.entrants],
                time_control=time_control,
                policy=policy,
                seat_key=seat_key,
                observer=metrics.OBSERVER,
            )
            entry = MatchEntry(driver)
            self.matches[match_id] = entry
            entry.task = loop.create_task(self._run(match_id, entry))
            ids.append(match_id)
        return ids, list(links.values())

    async def _run(self, match_id: str, entry: MatchEntry) -> MatchReport:
        variant = entry.driver.variant.name
        started = metrics.match_started(variant)
        report = None
        try:
            report = await entry.driver.run()
            return report
        except Exception as exc:  # a referee bug must end this match only, loudly
            entry.error = f"{type(exc).__name__}: {exc}"
            raise
        finally:
            metrics.match_ended(variant, started, report, aborted=bool(entry.error))
            entry.done.set()
            self._forget_finished(match_id, entry)

    def _forget_finished(self, match_id: str, entry: MatchEntry) -> None:
        # Constant work per match: its result kept compact, its driver dropped, its links released.
        self.results.add(match_id, result_to_wire(match_id, entry))
        self.matches.pop(match_id, None)
        for link in dict.fromkeys(entry.driver.links):
            self.release(link)

    def release(self, link: EntrantLink | StandingLink) -> None:
        """Forget a link once its games are over and no bot is connected with its token.

        A link joined to a standing connection leaves it; a standing link is forgotten once it
        is closed, its games are over and its bot is gone.
        """
        if isinstance(link, StandingLink):
            if link.closing is not None and not link.live and link.outbox is None:
                self.links.pop(link.token, None)
            return
        if link.standing is not None:
            if not link.live:
                link.standing.leave(link)
            return
        if not link.live and link.outbox is None:
            self.links.pop(link.token, None)

    def match(self, match_id: str) -> MatchEntry:
        """The match with that id, while it is played."""
        try:
            return self.matches[match_id]
        except KeyError:
            raise UnknownMatchError(self.results.missing(match_id)) from None

    def result(self, match_id: str) -> game_pb2.MatchResult:
        """A match's result: as far as it went while it is played, its kept result once over."""
        entry = self.matches.get(match_id)
        if entry is not None and not entry.done.is_set():
            return result_to_wire(match_id, entry)
        result = self.results.get(match_id)
        if result is None:
            raise UnknownMatchError(self.results.missing(match_id))
        return result

    def link(self, token: str) -> EntrantLink | StandingLink:
        """The link a token names (a standing one while it is open)."""
        link = self.links.get(token)
        if link is None or not (link.open if isinstance(link, StandingLink) else link.live):
            raise UnknownTokenError("unknown or expired token")
        return link

    async def shutdown(self) -> None:
        """Stop every running match."""
        tasks = [e.task for e in self.matches.values() if e.task and not e.task.done()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
