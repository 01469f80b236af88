"""``sixnimmt view FILE…``: the dashboard's replay viewer on transcript files, served locally.

The files are those ``play``, ``bot play`` and ``verify`` read and write (``--transcripts DIR``);
a directory stands for its ``*.json`` files. Each is verified against its seed before anything
is served, so a page never shows a game the rules would not play. The pages are the
dashboard's own: the same templates (``_replay.html`` is the replay part of the match page),
the same frames and board (:mod:`dashboard.replay`, the games' replay modules), the same
static files and security headers. What differs is the server: Python's ``http.server`` on
127.0.0.1, so the viewer needs Jinja2 and nothing else of the dashboard (no Starlette, uvicorn
or store): ``pip install 'sixnimmt-arena[view]'`` on top of the SDK.

Routes: ``/`` (the games, or the only game), ``/games/N?step=S&seat=K`` (the viewer; the seat's
view is exactly what the rules engine gives that seat), ``/api/games``,
``/api/games/N/replay?seat=K[&step=S]`` (the frames, as the dashboard's replay API),
``/api/games/N/transcript`` and ``/static/…``.
"""

from __future__ import annotations

import json
import mimetypes
import sys
import threading
import webbrowser
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from bot_sdk.cli import _checked, _load_transcript
from dashboard import pages
from dashboard.replay import Replay, board, of
from referee.rules.errors import RulesError
from referee.rules.transcript import verify

Response = tuple[int, str, bytes, dict[str, str]]
"""A response: status, content type, body, extra headers."""


@dataclass(frozen=True, slots=True)
class Game:
    """One transcript file, replayed, with its seats' names."""

    index: int
    path: Path
    replay: Replay
    names: tuple[str, ...]

    def summary(self, base: str = "") -> dict[str, Any]:
        """What the list of games and ``--json`` say of it."""
        outcome = self.replay.transcript.outcome
        return {
            "index": self.index,
            "file": str(self.path),
            "name": self.path.name,
            "url": f"{base}/games/{self.index}",
            "variant": self.replay.variant.name,
            "players": self.replay.players,
            "names": list(self.names),
            "steps": self.replay.steps,
            "outcome": None if outcome is None else outcome.to_json(),
            "termination": "" if outcome is None else outcome.termination.value,
            "digest": self.replay.transcript.digest(),
        }


def transcript_files(paths: Sequence[Path]) -> list[Path]:
    """The files named, a directory standing for its ``*.json`` files in name order."""
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            found = sorted(p for p in path.glob("*.json") if p.is_file())
            if not found:
                raise RulesError(f"{path} holds no transcript (*.json)")
            files += found
        elif path.exists():
            files.append(path)
        else:
            raise RulesError(f"no such file: {path}")
    return files


def load_games(paths: Sequence[Path]) -> list[Game]:
    """Every transcript, verified and replayed; the first bad one is a :class:`RulesError` in one
    line naming the file (not JSON, not a transcript, a game that is not installed, a
    transcript cut short, a chance outcome or an action the rules refuse)."""
    games = []
    for index, path in enumerate(transcript_files(paths)):
        transcript = _load_transcript(path)
        _checked(path, partial(verify, transcript))
        replay = _checked(path, partial(of, transcript))
        games.append(Game(index, path, replay, seat_names(transcript.meta, replay.players)))
    return games


def seat_names(meta: Mapping[str, Any], players: int) -> tuple[str, ...]:
    """The seats' names the runner wrote into the transcript's ``meta`` (``bot play``, ``play``),
    else ``seat 0``, ``seat 1``, …"""
    seats = meta.get("seats")
    if isinstance(seats, list) and len(seats) == players and all(isinstance(s, str) for s in seats):
        return tuple(seats)
    return tuple(f"seat {seat}" for seat in range(players))


# -- the server --------------------------------------------------------------------------------


class NotFound(Exception):
    """A 404: no such game, step, seat or page."""


class BadRequest(Exception):
    """A 400: a malformed parameter (never echoed)."""


class Viewer:
    """The pages and the API over loaded games; :meth:`answer` maps a path to a response."""

    def __init__(self, games: Sequence[Game]) -> None:
        self.games = list(games)
        self.env = pages.environment()
        self.static = {p.name: p for p in pages.STATIC.iterdir() if p.is_file()}

    def answer(self, target: str) -> Response:
        """(status, content type, body, extra headers) for a GET of ``target``."""
        parts = urlsplit(target)
        path, query = parts.path, parse_qs(parts.query, keep_blank_values=True)
        api = path.startswith("/api/")
        try:
            return self._route(path, query)
        except NotFound as exc:
            return self.error(api, 404, "Not found", str(exc))
        except BadRequest as exc:
            return self.error(api, 400, "Bad request", str(exc))

    def _route(self, path: str, query: dict[str, list[str]]) -> Response:
        segments = [s for s in path.split("/") if s]
        if not segments:
            if len(self.games) == 1:
                return 302, "text/plain", b"", {"Location": "/games/0"}
            return self._html("view_games.html", {"title": _count(len(self.games)), "games": self._list()})
        if segments == ["api", "games"]:
            return self._json({"games": self._list()})
        if segments[0] == "games" and len(segments) == 2:
            return self._page(self._game(segments[1]), query)
        if segments[:2] == ["api", "games"] and len(segments) == 4:
            game = self._game(segments[2])
            if segments[3] == "replay":
                return self._replay(game, query)
            if segments[3] == "transcript":
                return 200, "application/json", json.dumps(game.replay.transcript.to_json()).encode(), {}
        if segments[0] == "static" and len(segments) == 2 and segments[1] in self.static:
            file = self.static[segments[1]]
            kind = mimetypes.guess_type(file.name)[0] or "application/octet-stream"
            return 200, f"{kind}; charset=utf-8" if kind.startswith("text/") else kind, file.read_bytes(), {}
        raise NotFound("no such page")

    def _list(self) -> list[dict[str, Any]]:
        return [game.summary() for game in self.games]

    def _game(self, raw: str) -> Game:
        if not raw.isdigit() or int(raw) >= len(self.games):
            raise NotFound(f"no game {raw}: there {'is' if len(self.games) == 1 else 'are'} "
                           f"{_count(len(self.games))} (0 to {len(self.games) - 1})")  # fmt: skip
        return self.games[int(raw)]

    def _page(self, game: Game, query: dict[str, list[str]]) -> Response:
        replay = game.replay
        seat = _seat(query, replay.players)
        step = _step(query, replay.steps, min(1, replay.steps))
        frame = replay.frame(step, seat, game.names)
        context = {
            "title": f"{game.path.name}, step {step}",
            "game": game.summary(),
            "count": len(self.games),
            "frame": frame,
            "board": board(frame, game.names),
            "bulls": replay.bulls(),
            "seat": seat,
            "step": step,
            "steps": replay.steps,
        }
        return self._html("view.html", context)

    def _replay(self, game: Game, query: dict[str, list[str]]) -> Response:
        replay, names = game.replay, game.names
        seat = _seat(query, replay.players)
        if _one(query, "step") not in (None, ""):
            step = _step(query, replay.steps, 0)
            return self._json({"game": game.summary(), "frame": replay.frame(step, seat, names)})
        frames = [replay.frame(step, seat, names) for step in range(replay.steps + 1)]
        return self._json({"game": game.summary(), "seat": seat, "frames": frames})

    def _html(self, name: str, context: dict[str, Any]) -> Response:
        body = self.env.get_template(name).render(root="", **context)
        return 200, "text/html; charset=utf-8", body.encode(), {}

    def _json(self, value: Any, status: int = 200) -> Response:
        return status, "application/json", json.dumps(value).encode(), {}

    def error(self, api: bool, status: int, title: str, message: str) -> Response:
        if api:
            return self._json({"error": message}, status)
        context = {"title": title, "status": status, "message": message}
        body = self.env.get_template("view_error.html").render(root="", **context)
        return status, "text/html; charset=utf-8", body.encode(), {}


def _count(games: int) -> str:
    return f"{games} game{'' if games == 1 else 's'}"


def _one(query: dict[str, list[str]], name: str) -> str | None:
    values = query.get(name)
    return values[-1] if values else None


def _int(query: dict[str, list[str]], name: str, default: int, high: int) -> int:
    """A whole number from 0 to ``high`` (the dashboard's rules: digits only, at most nine)."""
    raw = _one(query, name)
    if raw is None or raw == "":
        return default
    if not raw.isdigit() or len(raw) > 9 or int(raw) > high:
        raise BadRequest(f"{name} must be a whole number from 0 to {high}")
    return int(raw)


def _seat(query: dict[str, list[str]], players: int) -> int | None:
    if _one(query, "seat") in (None, "", "all"):
        return None
    seat = _int(query, "seat", 0, 10**6)
    if seat >= players:
        raise NotFound(f"no seat {seat}: the game has {players} seats")
    return seat


def _step(query: dict[str, list[str]], steps: int, default: int) -> int:
    step = _int(query, "step", default, 10**6)
    if step > steps:
        raise NotFound(f"no step {step}: the game has {steps} steps")
    return step


def serve(viewer: Viewer, host: str = "127.0.0.1", port: int = 0) -> ThreadingHTTPServer:
    """A server for ``viewer`` listening on ``host:port`` (0: a free port); call its
    ``serve_forever``."""

    hosts: set[str] = set()  # the names this server answers to, once it has its port

    class Handler(BaseHTTPRequestHandler):
        server_version = "sixnimmt-view"

        def do_GET(self) -> None:
            api = self.path.startswith("/api/")
            try:
                if self.headers.get("Host") not in hosts:
                    # Another name for 127.0.0.1 (DNS rebinding): a web page must not read the games.
                    status, kind, body, headers = viewer.error(api, 400, "Bad request", "unknown host")
                else:
                    status, kind, body, headers = viewer.answer(self.path)
            except Exception as exc:  # a bug: the page says so in one line, the server goes on
                print(f"sixnimmt view: {self.path}: {type(exc).__name__}: {exc}", file=sys.stderr)
                failed = "the viewer failed to answer; the error is in its output"
                status, kind, body, headers = viewer.error(api, 500, "Error", failed)
            send(self, (status, kind, body, headers))

        def log_message(self, format: str, *args: Any) -> None:  # quiet: the URL is all it says
            pass

    server = ThreadingHTTPServer((host, port), Handler)
    hosts.update({f"{host}:{server.server_port}", f"localhost:{server.server_port}"})
    return server


def send(handler: BaseHTTPRequestHandler, response: Response) -> None:
    """Write ``response`` on an ``http.server`` handler: never cached, with the dashboard's
    security headers (``sixnimmt view`` and ``sixnimmt play --human`` answer alike)."""
    status, kind, body, headers = response
    handler.send_response(status)
    handler.send_header("Content-Type", kind)
    handler.send_header("Content-Length", str(len(body)))
    handler.send_header("Cache-Control", "no-store")
    for name, value in headers.items():
        handler.send_header(name, value)
    for name_bytes, value_bytes in pages.SECURITY_HEADERS:
        handler.send_header(name_bytes.decode(), value_bytes.decode())
    handler.end_headers()
    handler.wfile.write(body)


def cmd_view(args: Any, opener: Callable[[str], bool] = webbrowser.open) -> int:
    """Load the transcripts, serve them on 127.0.0.1, open a browser (unless ``--no-open``),
    serve until Ctrl-C."""
    games = load_games(args.transcripts)
    try:
        server = serve(Viewer(games), port=args.port)
    except OSError as exc:
        raise RulesError(f"cannot listen on 127.0.0.1:{args.port}: {exc.strerror or exc}") from None
    url = f"http://127.0.0.1:{server.server_port}/"
    start = url if len(games) > 1 else f"{url}games/0"
    if args.json:
        print(json.dumps({"url": url, "games": [g.summary(url.rstrip("/")) for g in games]}), flush=True)
    else:
        what = games[0].path if len(games) == 1 else _count(len(games))
        print(f"sixnimmt view: {what} at {start} (Ctrl-C stops it)", flush=True)
    if not args.no_open:

        def open_browser() -> None:  # a text-mode browser may hold the terminal: never the server
            if not opener(start):
                print(f"sixnimmt view: no browser found; open {start}", file=sys.stderr, flush=True)

        threading.Thread(target=open_browser, name="open-browser", daemon=True).start()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print("sixnimmt view: stopped", file=sys.stderr)
    finally:
        server.server_close()
    return 0
