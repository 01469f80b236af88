"""``sixnimmt play --human``: a person (or several) against bots, in the browser, on this machine.

A referee runs in this process (:func:`arena.referee_thread.referee_in_thread`), every bot is its
own process as ``bot play`` starts them (:func:`arena.matches.spawn_bot`), and each person's
seat is a :class:`~dashboard.table.seat.Seat`: a bot connection of its own to the same referee.
The pages are served on 127.0.0.1 by Python's ``http.server``, as ``sixnimmt view`` serves its
replays (and with its :class:`~dashboard.view.Viewer` for the games played): ``/seats/K`` is
the page of the K-th person, ``/games/N`` the replay of game N once it is over.

The games are played one after another, each under the people's time control
(``SIXNIMMT_HUMAN_DECISION_MS``, ``SIXNIMMT_HUMAN_BANK_MS``) for every seat of the table. After
the last game the pages stay served (the result, the replays) until no page has asked for
anything for ``SIXNIMMT_HUMAN_GRACE_S`` seconds, or Ctrl-C.
"""

from __future__ import annotations

import contextlib
import json
import signal
import socket
import sys
import tempfile
import threading
import time
import webbrowser
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import grpc

from arena.matches import (
    GOODBYE_GRACE_S,
    BotProcess,
    FinishedMatch,
    Launcher,
    MatchPlan,
    RefereeClient,
    RefereeError,
    spawn_bot,
    stop_bot,
)
from arena.referee_thread import referee_in_thread
from arena.tournament import unique_names
from bot_sdk import command
from bot_sdk.loader import load_bot, spec_label
from dashboard.replay import of
from dashboard.table import handlers
from dashboard.table.seat import Seat, SeatError, human_name
from dashboard.view import Game, Response, Viewer, seat_names, send
from referee.clikit.progress import progress_bar
from referee.rules.errors import ConfigError, RulesError
from referee.rules.registry import make_variant
from referee.rules.seeding import derive_seed
from referee.rules.transcript import Transcript, verify
from referee.settings import load as load_settings


@dataclass(slots=True)
class Played:
    """One game of the table, once the referee has finished it."""

    number: int
    match: FinishedMatch
    path: Path
    entrants: tuple[str, ...]
    kept: bool = True
    """Whether the transcript file stays (``--transcripts DIR``) or goes with the table."""

    def to_json(self, base: str = "") -> dict[str, Any]:
        return {
            "game": self.number,
            "match_id": self.match.match_id,
            "status": self.match.status,
            "file": str(self.path) if self.kept else None,
            "replay": f"{base}/games/{self.number}",
            "digest": self.match.digest,
            "seats": [
                {
                    "seat": s.seat,
                    "name": s.entrant,
                    "score": s.score,
                    "rank": s.rank,
                    "faults": {k.value: v for k, v in s.faults.items()},
                }
                for s in self.match.seats
            ],
        }


@dataclass
class LocalTable:
    """The people's seats, the bots and the games of one ``play --human`` run, and its server."""

    variant: str
    config: dict[str, Any]
    people: list[str]
    """The people's entrant names (``human:NAME``), in the order their pages are numbered."""
    bots: dict[str, str]
    """The bots' entrant names → their specs."""
    games: int = 1
    seed: int = 1
    transcripts: Path | None = None
    settings: Any = field(default_factory=load_settings)
    launch: Launcher | None = None
    """What starts the bots' processes (:func:`arena.matches.spawn_bot`): the sandbox, as the
    command runs them (:data:`Confine`), or plain processes (None, as ``bot play`` starts them)."""
    seats: list[Seat] = field(init=False)
    viewer: Viewer = field(init=False)
    played: list[Played] = field(init=False, default_factory=list)
    url: str = field(init=False, default="")
    _server: ThreadingHTTPServer | None = field(init=False, default=None)
    _closed: threading.Event = field(init=False, default_factory=threading.Event)

    def __post_init__(self) -> None:
        grace = self.settings.human_grace_s
        self.seats = [Seat(entrant, grace_s=grace) for entrant in self.people]
        self.viewer = Viewer([])

    @property
    def entrants(self) -> list[str]:
        return [*self.people, *self.bots]

    def seat_url(self, index: int) -> str:
        return f"{self.url}seats/{index}"

    # -- the server -------------------------------------------------------------------------

    def serve(self, port: int = 0) -> str:
        """Listen on 127.0.0.1:``port`` (0: a free one) on a thread; returns the base URL."""
        try:
            self._server = serve(self.answer, port=port)
        except OSError as exc:
            raise RulesError(f"cannot listen on 127.0.0.1:{port}: {exc.strerror or exc}") from None
        self.url = f"http://127.0.0.1:{self._server.server_port}/"
        threading.Thread(target=self._server.serve_forever, name="play-server", daemon=True).start()
        return self.url

    def answer(self, method: str, target: str, body: bytes, content_type: str | None) -> Response:
        """A response for ``method target`` (GET or POST)."""
        parts = urlsplit(target)
        segments = [s for s in parts.path.split("/") if s]
        query = parse_qs(parts.query, keep_blank_values=True)
        if segments == [] and method == "GET":
            if len(self.seats) == 1:
                return 302, "text/plain", b"", {"Location": "/seats/0"}
            return self._seats_page()
        if segments[:1] == ["seats"] and len(segments) == 2 and method == "GET":
            seat = self._seat(segments[1])
            if seat is not None:
                index = int(segments[1])
                return handlers.page(seat, api=f"/api/seats/{index}", title=f"{seat.entrant} at the table")
        if segments[:2] == ["api", "seats"] and len(segments) == 4:
            seat = self._seat(segments[2])
            if seat is not None and segments[3] == "state" and method == "GET":
                return handlers.state(seat, query)
            if seat is not None and segments[3] == "choose" and method == "POST":
                return handlers.choose(seat, body, content_type)
        if method != "GET":
            return 405, "application/json", b'{"error": "not allowed"}', {"Allow": "GET"}
        return self.viewer.answer(target)

    def _seat(self, raw: str) -> Seat | None:
        if raw.isdigit() and int(raw) < len(self.seats):
            return self.seats[int(raw)]
        return None

    def _seats_page(self) -> Response:
        body = (
            handlers.environment()
            .get_template("play_seats.html")
            .render(root="", title="The table", seats=[(i, s.entrant) for i, s in enumerate(self.seats)])
        )
        return 200, "text/html; charset=utf-8", body.encode(), {}

    # -- the games --------------------------------------------------------------------------

    def play(self, client: RefereeClient, progress: Callable[[int], None] | None = None) -> list[Played]:
        """Play the games one after another on ``client``'s referee; each person plays through
        their page."""
        for seat in self.seats:
            seat.tell(games=self.games)
        with contextlib.ExitStack() as stack:
            directory = self.transcripts or Path(stack.enter_context(tempfile.TemporaryDirectory()))
            directory.mkdir(parents=True, exist_ok=True)
            for number in range(self.games):
                if self._closed.is_set():
                    break  # closed between games: the next one is not started
                self.played.append(self._play_one(client, number, directory))
                if progress is not None:
                    progress(1)
        return self.played

    def _play_one(self, client: RefereeClient, number: int, directory: Path) -> Played:
        entrants = self.entrants
        # Game g moves everyone g seats on: a person does not always open the hand.
        seating = tuple(entrants[(s - number) % len(entrants)] for s in range(len(entrants)))
        plan = MatchPlan(seating, derive_seed(self.seed, "game", number))
        (match_id,), tokens = client.create_matches(
            self.variant,
            self.config,
            [plan],
            decision_ms=self.settings.human_decision_ms,
            bank_ms=self.settings.human_bank_ms,
        )
        processes: dict[str, BotProcess] = {}
        grace = 0.0  # an interrupted game: its bots have nothing left to finish
        try:
            for entrant, spec in self.bots.items():
                processes[entrant] = spawn_bot(
                    spec,
                    referee=client.address,
                    token=tokens[entrant],
                    variant=self.variant,
                    name=entrant,
                    launch=self.launch,
                )
            runners = []
            for seat in self.seats:
                seat.tell(game=number + 1, replay=None)
                runners.append(seat.play(client.address, tokens[seat.entrant]))
            match = _result(client, match_id)
            grace = GOODBYE_GRACE_S
            for runner in runners:
                runner.join(GOODBYE_GRACE_S)
        finally:
            for process in processes.values():
                stop_bot(process, grace, None)
        path = directory / f"game-{number:04d}.json"
        path.write_text(json.dumps(match.transcript))
        transcript = Transcript.from_json(match.transcript)
        verify(transcript)
        replay = of(transcript)
        self.viewer.games.append(
            Game(len(self.viewer.games), path, replay, seat_names(transcript.meta, replay.players))
        )
        played = Played(number, match, path, seating, kept=self.transcripts is not None)
        outcome = transcript.outcome
        for seat in self.seats:
            seat.over(outcome.to_json() if outcome is not None else {}, replay=f"/games/{number}")
        return played

    def idle(self) -> bool:
        """Whether no page has asked for anything for the grace period (or none ever came)."""
        grace = self.settings.human_grace_s
        now = time.monotonic()
        return all(s.last_seen is None or now - s.last_seen > grace for s in self.seats)

    def close(self) -> None:
        """Stop the seats and the server; a game being played ends by the referee's defaults (its
        seats leave, or say goodbye as soon as they connect), and no further game starts."""
        self._closed.set()
        for seat in self.seats:
            seat.shut()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()


def _result(client: RefereeClient, match_id: str) -> FinishedMatch:
    """The match's result once it is over (asked a second at a time, so Ctrl-C gets through)."""
    while True:
        try:
            return client.result(match_id, wait=True, timeout=1.0)
        except RefereeError as exc:
            cause = exc.__cause__
            if not (isinstance(cause, grpc.Call) and cause.code() == grpc.StatusCode.DEADLINE_EXCEEDED):
                raise


def serve(
    answer: Callable[[str, str, bytes, str | None], Response], host: str = "127.0.0.1", port: int = 0
) -> ThreadingHTTPServer:
    """A server of ``answer(method, target, body, content_type)`` on ``host:port``, with the
    dashboard's security headers, answering only to its own host names."""
    hosts: set[str] = set()

    class Handler(BaseHTTPRequestHandler):
        server_version = "sixnimmt-play"
        protocol_version = "HTTP/1.1"

        def setup(self) -> None:
            super().setup()
            # Headers and body leave in two writes: without this, Nagle's algorithm holds the
            # body until the browser's delayed ACK (40 ms) on a kept-alive connection.
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def do_GET(self) -> None:
            self._answer("GET", b"")

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(min(length, handlers.MAX_CHOICE_BYTES + 1))
            self._answer("POST", body)

        def _answer(self, method: str, body: bytes) -> None:
            try:
                if self.headers.get("Host") not in hosts:
                    # Another name for 127.0.0.1 (DNS rebinding): a web page must not play here.
                    status, kind, out, headers = 400, "text/plain", b"unknown host", {}
                else:
                    status, kind, out, headers = answer(
                        method, self.path, body, self.headers.get("Content-Type")
                    )
            except Exception as exc:  # a bug: one line on stderr, the table goes on
                print(f"sixnimmt play: {self.path}: {type(exc).__name__}: {exc}", file=sys.stderr)
                status, kind, out, headers = 500, "text/plain", b"the table failed to answer", {}
            try:
                send(self, (status, kind, out, headers))
            except OSError:  # the page went away while its long poll waited
                self.close_connection = True

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer((host, port), Handler)
    server.daemon_threads = True
    hosts.update({f"{host}:{server.server_port}", f"localhost:{server.server_port}"})
    return server


# -- the command --------------------------------------------------------------------------------


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def table_of(args: Any) -> LocalTable:
    """The table the command line asks for, checked before anything starts: the variant and its
    options, the number of seats, every bot loadable, the people's names."""
    from referee.clikit.options import parse_options

    specs = [s.strip() for s in (args.bots or "").split(",") if s.strip()]
    try:
        people = [human_name(name) for name in (args.name or "you").split(",")]
    except SeatError as exc:
        raise RulesError(str(exc)) from None
    if len(set(people)) != len(people):
        raise RulesError(f"two people of one name: {args.name}")
    config = parse_options(args.option)
    config.setdefault("players", len(specs) + len(people))
    game = make_variant(args.variant, config)
    if game.players != len(specs) + len(people):
        raise ConfigError(
            f"a {game.players}-player game needs {game.players - len(people)} bots besides"
            f" {len(people)} {'person' if len(people) == 1 else 'people'}; --bots gave {len(specs)}"
        )
    for spec in specs:
        if command.preload(spec) is None:  # fail before starting anything
            load_bot(spec, args.variant)
    names = unique_names([*people, *(spec_label(spec) for spec in specs)])[len(people) :]
    return LocalTable(
        variant=game.name,
        config=config,
        people=people,
        bots=dict(zip(names, specs, strict=True)),
        games=args.games or 1,
        seed=args.seed,
        transcripts=args.transcripts,
    )


Confine = Callable[[dict[str, str], str, Path, Path], tuple[dict[str, str], Launcher]]
"""Packs the bots (entrant name → spec) under a root (the first path, which holds the referee's
socket too) and returns their new specs and the sandbox that starts them, its bots' private
directories in the second path: :func:`workers.bots.confined.confine`, which the command line
passes in (this module stays free of the league's packages: the replay viewer's contract)."""


def cmd_play_human(
    args: Any, opener: Callable[[str], bool] = webbrowser.open, confine: Confine | None = None
) -> int:
    """``sixnimmt play --human``: serve the table, open the browser, play, then serve the result
    and the replays until the pages are gone. With ``confine`` the bots run in the sandbox."""
    table = table_of(args)
    with contextlib.ExitStack() as stack:
        files = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="sixnimmt-play-")))
        if confine is not None:  # before anything is served: a bot that cannot be confined is an error
            private = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="sixnimmt-play-bots-")))
            table.bots, table.launch = confine(table.bots, table.variant, files, private)
        return _serve_and_play(table, args, opener, files)


def _serve_and_play(table: LocalTable, args: Any, opener: Callable[[str], bool], files: Path) -> int:
    url = table.serve(args.port)
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, _interrupt)  # stopped as by Ctrl-C: the bots and seats end too
    seats = [{"name": seat.entrant, "url": table.seat_url(i)} for i, seat in enumerate(table.seats)]
    start = url if len(seats) > 1 else seats[0]["url"]
    if args.json:
        print(json.dumps({"url": start, "seats": seats}), flush=True)
    else:
        print(f"sixnimmt play: your table is at {start} (Ctrl-C stops it)", flush=True)
    if not args.no_open:

        def open_browser() -> None:  # a text-mode browser may hold the terminal: never the table
            if not opener(start):
                print(f"sixnimmt play: no browser found; open {start}", file=sys.stderr, flush=True)

        threading.Thread(target=open_browser, name="open-browser", daemon=True).start()
    try:
        with (
            referee_in_thread(files) as client,
            progress_bar(table.games, "games", args.json) as bar,
        ):
            played = table.play(client, bar.update)
        summary = [game.to_json(url.rstrip("/")) for game in played]
        if args.json:
            print(json.dumps({"games": summary}), flush=True)
        else:
            for game in summary:
                scores = ", ".join(f"{s['name']} {s['score']}" for s in game["seats"])
                print(f"game {game['game'] + 1}: {scores} · replay {game['replay']}", flush=True)
            print("sixnimmt play: the pages stay open until you close them (or Ctrl-C)", flush=True)
        while not table.idle():
            time.sleep(0.5)
    except KeyboardInterrupt:
        print("sixnimmt play: stopped", file=sys.stderr)
    finally:
        table.close()
    return 0
