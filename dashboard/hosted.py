"""The dashboard's Play page: tables where a visitor plays against stored bot versions.

Off unless the operator switches it on (``SIXNIMMT_PLAY=on``). A visitor names itself (a guest)
or is the signed-in operator, picks a variant, its options and the opponents among the stored bot
versions not retired, and sits down. The dashboard process then runs the table on a thread of its
own, as a league worker plays a block on fresh processes: a referee in this process
(:func:`arena.referee_thread.referee_in_thread`), each opponent's stored code unpacked and started
as its own sandboxed process (:func:`workers.sandbox.sandbox_for`, through
:func:`arena.matches.spawn_bot`), and the person's seat, a bot connection held by this server
(:mod:`dashboard.table`), which the table's page feeds. At most ``SIXNIMMT_PLAY_MAX_TABLES``
tables play at once. The finished game is stored as a game against people
(:func:`workers.store.repo.record_human_match`): the referee's transcript with its digest, the
person's seat named ``human:NAME``, apart from every league.

Pure of Starlette: :mod:`dashboard.app` serves it.
"""

from __future__ import annotations

import logging
import os
import secrets
import tempfile
import threading
import time
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import Engine

from arena.matches import (
    GOODBYE_GRACE_S,
    BotProcess,
    FinishedMatch,
    MatchPlan,
    ProcessExit,
    spawn_bot,
    stop_bot,
)
from arena.referee_thread import referee_in_thread
from dashboard.table.seat import Seat, SeatError, human_name
from referee.clikit.options import parse_options
from referee.rules.config import describe
from referee.rules.errors import RulesError
from referee.rules.registry import VARIANTS, find_variant, make_variant
from referee.rules.transcript import Transcript, verify
from referee.settings import Settings
from workers.bots.artifacts import bot_spec, unpack_readable
from workers.play.faults import seat_fault_detail
from workers.sandbox import sandbox_for
from workers.store import repo

log = logging.getLogger(__name__)

MAX_OPPONENTS = 5
"""Opponent slots on the Play page (a table of up to six)."""
KEPT_FINISHED = 256
"""Finished tables kept in memory, so that their pages still show the result and the replay's link."""
SEED_BITS = 62


class PlayError(ValueError):
    """The Play form asks for something that cannot be played (a 400, with this message)."""


class TablesFull(RuntimeError):
    """Every table the dashboard may run at once is in use (a 429)."""


@dataclass(frozen=True, slots=True)
class Sitting:
    """What a visitor asked for: a variant with its options, the opponents, and who sits down."""

    variant: str
    config: Mapping[str, Any]
    opponents: tuple[repo.BotVersion, ...]
    entrant: str
    """The person's seat name in the referee's match and its transcript: ``human:NAME``."""
    operator: bool = False

    def seat_names(self) -> list[str]:
        """Every entrant's name, the person's first: ``human:NAME``, then each ``bot@version``
        (``#k`` where one version sits k times). The table seats them in a random order."""
        return [self.entrant, *repo.labels_apart([f"{v.bot}@{v.version}" for v in self.opponents])]


def person_name(text: str | None) -> str:
    """The seat name of a guest who calls itself ``text``: ``human:NAME``
    (:func:`dashboard.table.seat.human_name`'s rule); :class:`PlayError` otherwise."""
    try:
        return human_name(text or "")
    except SeatError as exc:
        raise PlayError(str(exc)) from None


def variant_name(text: str) -> str:
    """The variant named ``text`` (or one of its aliases); :class:`PlayError` for none."""
    try:
        return find_variant(text).name
    except RulesError as exc:
        raise PlayError(str(exc)) from None


def variants() -> list[dict[str, Any]]:
    """Every installed variant with its options as the Play form offers them: each option's name,
    default, bounds and meaning; ``players`` is left out (it is one more than the opponents)."""
    out = []
    for cls in VARIANTS:
        options = describe(cls.config_type)
        players = next((o for o in options if o["name"] == "players"), None)
        out.append(
            {
                "name": cls.name,
                "players_min": players["min"] if players else 2,
                "players_max": players["max"] if players else MAX_OPPONENTS + 1,
                "options": [
                    {**o, "value": "" if o["default"] is None else _text(o["default"])}
                    for o in options
                    if o["name"] != "players"
                ],
            }
        )
    return out


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def sitting(
    form: Mapping[str, str], playable: Sequence[repo.BotVersion], *, entrant: str, operator: bool
) -> Sitting:
    """The sitting the Play form asks for: ``variant``, ``o.NAME`` options (empty: the default),
    ``opponent1`` … ``opponent5`` (bot version ids, empty: no one); :class:`PlayError` when it
    cannot be played (an unknown variant or version, a retired one or one of another variant, a
    table size or an option the variant refuses)."""
    try:
        cls = find_variant(form.get("variant", ""))
    except RulesError as exc:
        raise PlayError(str(exc)) from None
    by_id = {v.id: v for v in playable}
    opponents = []
    for slot in range(1, MAX_OPPONENTS + 1):
        raw = form.get(f"opponent{slot}", "").strip()
        if not raw:
            continue
        version = by_id.get(int(raw)) if raw.isdigit() and len(raw) <= 9 else None
        if version is None:
            raise PlayError(
                f"opponent {slot}: no such bot version to play against (retired, or never stored)"
            )
        if version.variant != cls.name:
            raise PlayError(
                f"opponent {slot}: {version.bot}@{version.version} plays {version.variant}, not {cls.name}"
            )
        opponents.append(version)
    if not opponents:
        raise PlayError("choose at least one opponent")
    known = {o["name"]: o for o in describe(cls.config_type)}
    pairs = []
    for key, value in form.items():
        if key.startswith("o.") and value.strip():
            name = key[2:]
            if name not in known or name == "players":
                raise PlayError(f"{cls.name} has no option {name!r} to set here")
            default = known[name]["default"]
            if value.strip() != ("" if default is None else _text(default)):
                pairs.append(f"{name}={value.strip()}")
    try:
        config = {**parse_options(pairs), "players": len(opponents) + 1}
        make_variant(cls.name, config)
    except RulesError as exc:
        raise PlayError(f"{cls.name}: {exc}") from None
    return Sitting(cls.name, config, tuple(opponents), entrant, operator)


@dataclass
class HostedTable:
    """One table of the Play page: its secret id (the page's address), what was asked for, the
    person's seat, and how far it is."""

    id: str
    sitting: Sitting
    seat: Seat
    status: str = "starting"
    """``starting``, ``playing``, ``stored`` (the game is in the store: :attr:`match_id`) or ``failed``."""
    root: str = ""
    """Where the dashboard is served: the replay's link starts with it."""
    match_id: int | None = None
    error: str | None = None
    started: float = field(default_factory=time.monotonic)
    thread: threading.Thread | None = field(default=None, repr=False)

    @property
    def over(self) -> bool:
        return self.status in ("stored", "failed")

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "variant": self.sitting.variant,
            "config": dict(self.sitting.config),
            "seats": self.sitting.seat_names(),
            "status": self.status,
            "match_id": self.match_id,
            "error": self.error,
        }


class Tables:
    """The tables the Play page runs, at most ``max_tables`` playing at once."""

    def __init__(self, engine: Engine, settings: Settings) -> None:
        self.engine = engine
        self.settings = settings
        self.max_tables = settings.play_max_tables
        self._tables: OrderedDict[str, HostedTable] = OrderedDict()
        self._lock = threading.Lock()
        self._closed = False

    def playing(self) -> int:
        """Tables not over yet."""
        with self._lock:
            return sum(not t.over for t in self._tables.values())

    def get(self, table_id: str) -> HostedTable | None:
        with self._lock:
            return self._tables.get(table_id)

    def sit(self, sitting: Sitting, root: str = "") -> HostedTable:
        """Start a table for ``sitting``; :class:`TablesFull` when as many play already. ``root``:
        where the dashboard is served (the replay's link starts with it)."""
        with self._lock:
            if self._closed or sum(not t.over for t in self._tables.values()) >= self.max_tables:
                raise TablesFull(f"all {self.max_tables} tables are in use")
            seat = Seat(sitting.entrant, grace_s=self.settings.human_grace_s)
            # The visitor is on the way to its page: one that never comes leaves the table after
            # the grace period, as a closed tab does, rather than holding it through every time-out.
            seat.seen()
            table = HostedTable(secrets.token_urlsafe(18), sitting, seat, root=root)
            self._tables[table.id] = table
            finished = [key for key, t in self._tables.items() if t.over]
            for key in finished[: max(0, len(finished) - KEPT_FINISHED)]:
                del self._tables[key]
        table.thread = threading.Thread(
            target=self._run, args=(table,), name=f"play-{table.id[:6]}", daemon=True
        )
        table.thread.start()
        return table

    def close(self, timeout: float = 20.0) -> None:
        """Stop every table still playing (their persons' seats leave: disconnect faults) and wait
        ``timeout`` seconds at most in all for them to be stored."""
        with self._lock:
            self._closed = True
            tables = list(self._tables.values())
        for table in tables:
            if not table.over:
                table.seat.leave("the dashboard is stopping")
        deadline = time.monotonic() + timeout
        for table in tables:
            if table.thread is not None:
                table.thread.join(max(0.0, deadline - time.monotonic()))
            table.seat.shut()

    def _run(self, table: HostedTable) -> None:
        try:
            played = play_table(self.engine, table, self.settings)
            table.match_id = store_game(self.engine, table.sitting, played)
            # The table's place is free before its page shows the result: a person who sits down
            # again at once finds it free.
            table.status = "stored"
            # A seat that left before the end (its page gone, then back) learns the result here.
            table.seat.over(
                played[0].transcript.get("outcome") or {},
                replay=f"{table.root}/human-matches/{table.match_id}",
                match_id=table.match_id,
            )
        except Exception as exc:  # the page says the table failed; the log has why
            log.exception("table %s failed", table.id[:6])
            table.error = f"{type(exc).__name__}: {exc}"
            table.status = "failed"
            table.seat.leave(
                "the table could not be played (the dashboard's log says why); sit down again later"
            )
        finally:
            # Its threads end; its page stops following it, and the state keeps the result and
            # the replay's link for a reload.
            table.seat.shut()


def play_table(
    engine: Engine, table: HostedTable, settings: Settings
) -> tuple[FinishedMatch, dict[str, ProcessExit]]:
    """Play ``table``'s game: a referee in this process, the opponents' stored code each a sandboxed
    process, the person's seat connected with its token; the finished match and how each bot process
    ended (by seat name)."""
    sitting = table.sitting
    names = sitting.seat_names()
    with (
        tempfile.TemporaryDirectory(prefix="sixnimmt-play-") as files,
        tempfile.TemporaryDirectory(prefix="sixnimmt-play-bots-") as private,
    ):
        root = Path(files)
        # As a league block's: only this process enters the root; each sandboxed bot gets its own
        # directory bound into a root of its own (workers.sandbox).
        os.chmod(root, 0o700)
        os.chmod(private, 0o711)
        specs = {}
        for name, version in zip(names[1:], sitting.opponents, strict=True):
            directory = root / f"bot{len(specs)}"
            unpack_readable(repo.code_of(engine, version), directory)
            specs[name] = bot_spec(directory, version.entry_point)
        launch = sandbox_for(root)
        launch.workdir = Path(private)
        with referee_in_thread(root) as client:
            ids, tokens = client.create_matches(
                sitting.variant,
                sitting.config,
                [MatchPlan(seated(names), secrets.randbits(SEED_BITS))],
                decision_ms=settings.human_decision_ms,
                bank_ms=settings.human_bank_ms,
                connect_ms=settings.connect_ms,
                max_faults=settings.max_faults,
            )
            processes: dict[str, BotProcess] = {}
            exits: dict[str, ProcessExit] = {}
            try:
                table.seat.play(client.address, tokens[sitting.entrant])
                for name, spec in specs.items():
                    processes[name] = spawn_bot(
                        spec,
                        referee=client.address,
                        token=tokens[name],
                        variant=sitting.variant,
                        name=name,
                        launch=launch,
                    )
                table.status = "playing"
                (match,) = client.results(ids, timeout=24 * 3600)
            finally:
                for name, process in processes.items():
                    exits[name], _ = stop_bot(process, GOODBYE_GRACE_S, None)
                launch.close()
    return match, exits


def seated(names: Sequence[str]) -> tuple[str, ...]:
    """The entrants in a random seat order: the person sits anywhere (in some variants the first
    seat plays first)."""
    order = list(names)
    secrets.SystemRandom().shuffle(order)
    return tuple(order)


def store_game(
    engine: Engine, sitting: Sitting, played: tuple[FinishedMatch, Mapping[str, ProcessExit]]
) -> int:
    """Verify the finished game's transcript and store it as a game against people; its id."""
    match, exits = played
    if match.status != "finished":
        raise RuntimeError(f"the game did not finish: {match.status} {match.error}".strip())
    transcript = Transcript.from_json(match.transcript)
    verify(transcript)
    if transcript.digest() != match.digest:
        raise RuntimeError("the referee's digest is not its transcript's")
    names = sitting.seat_names()
    versions = dict(zip(names[1:], sitting.opponents, strict=True))
    seats = []
    for s in sorted(match.seats, key=lambda s: s.seat):
        person = s.entrant == sitting.entrant
        seats.append(
            repo.HumanSeat(
                seat=s.seat,
                bot_version_id=None if person else versions[s.entrant].id,
                person=sitting.entrant if person else None,
                score=s.score,
                rank=s.rank,
                faults={str(kind): count for kind, count in s.faults.items()},
                defaulted=s.defaulted,
                forfeited=s.forfeited,
                think_ms=s.think_ms,
                fault_detail=seat_fault_detail(s.faults, s.reasons, None if person else exits.get(s.entrant)),
            )
        )
    return repo.record_human_match(
        engine,
        repo.HumanMatch(
            variant=sitting.variant,
            config=dict(sitting.config),
            seed=transcript.seed,
            digest=match.digest,
            termination=str(match.transcript.get("outcome", {}).get("termination", "")),
            seats=seats,
            transcript=match.transcript,
            operator=sitting.operator,
        ),
    )
