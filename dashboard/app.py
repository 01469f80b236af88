"""The dashboard's web application: server-rendered pages, the JSON API under ``/api``,
``/healthz`` and ``/metrics``, over the league store (read only).

Every page has an API twin that returns what the page shows. Unknown ids are 404s (a page for
people, ``{"error": …}`` for the API); malformed parameters are 400s.

Seats' fault details (reasons, exit, stderr) are the operator's alone (:mod:`dashboard.access`):
``/signin`` trades the operator token for a session cookie, the API takes it as a Bearer token,
and wrong credentials are a bare 401 on every route.

With ``SIXNIMMT_PLAY=on``, the Play page (``/play``, :mod:`dashboard.hosted`) runs tables where a
visitor plays against stored bot versions, and writes the games to the store; off, none of its
routes exists. Games against people are replayed at ``/human-matches/{id}``.
"""

from __future__ import annotations

import contextlib
import hmac
import secrets
from collections.abc import AsyncIterator, Callable
from typing import Any
from urllib.parse import parse_qs

from sqlalchemy import Engine
from sqlalchemy.exc import SQLAlchemyError
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

from dashboard import competitions, data, hosted, pages, sprtview
from dashboard.access import (
    ANONYMOUS,
    SESSION_COOKIE,
    SESSION_SECONDS,
    OperatorAuth,
    Unauthorized,
    Viewer,
    local_path,
)
from dashboard.metrics import MetricsMiddleware, exposition
from dashboard.pages import SECURITY_HEADERS
from dashboard.replay import board
from dashboard.table import handlers as seat_pages
from referee.rules.errors import TranscriptError
from referee.settings import Settings
from workers.store import repo
from workers.store.engine import make_engine
from workers.store.repo import NotFoundError

PAGE_SIZE = 50
MAX_PAGE_SIZE = 200
LIVE_POLL_MS = 1500
MAX_FORM_BYTES = 4096
"""The sign-in and Play forms' largest body; a bigger one is refused, unread."""
CSRF_COOKIE = "sixnimmt_play_form"
"""The Play form's anti-forgery cookie: the form must post back the same random value."""


class SecurityHeaders:
    """ASGI middleware adding :data:`SECURITY_HEADERS` to every response."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_wrapper(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *SECURITY_HEADERS]
            await send(message)

        await self.app(scope, receive, send_wrapper)


class OperatorAccess:
    """ASGI middleware: who made each request (``scope["state"]["viewer"]``), from its
    ``Authorization`` header or session cookie; wrong credentials end it with a bare 401.

    A response to the operator is never stored by a cache (``no-store``), and every response
    varies with the credentials, so no shared cache hands an operator's page to anyone else.
    """

    def __init__(self, app: Any, auth: OperatorAuth) -> None:
        self.app = app
        self.auth = auth

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope)
        try:
            viewer = self.auth.viewer(
                request.headers.get("authorization"), request.cookies.get(SESSION_COOKIE)
            )
        except Unauthorized:
            response = JSONResponse(
                {"error": "unauthorized"}, status_code=401, headers={"www-authenticate": "Bearer"}
            )
            await response(scope, receive, send)
            return
        scope.setdefault("state", {})["viewer"] = viewer

        async def send_wrapper(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                extra = [(b"vary", b"Authorization, Cookie")]
                if viewer.operator:
                    extra.append((b"cache-control", b"no-store"))
                message["headers"] = [*message.get("headers", []), *extra]
            await send(message)

        await self.app(scope, receive, send_wrapper)


def viewer_of(request: Request) -> Viewer:
    """Who made ``request`` (set by :class:`OperatorAccess`; anonymous without it)."""
    found = request.scope.get("state", {}).get("viewer", ANONYMOUS)
    return found if isinstance(found, Viewer) else ANONYMOUS


def _https(request: Request) -> bool:
    """Whether the browser reached the dashboard over HTTPS (directly or through a TLS proxy).

    Trusting ``X-Forwarded-Proto`` here can only add the cookie's Secure flag, never remove it.
    """
    forwarded = request.headers.get("x-forwarded-proto", "").split(",")[0].strip().lower()
    return request.url.scheme == "https" or forwarded == "https"


def _same_origin(request: Request) -> bool:
    """Whether a form was posted from this site: no ``Origin`` (an old browser, a script), or one
    whose host is this request's host."""
    origin = request.headers.get("origin")
    if origin is None:
        return True
    host = request.headers.get("host", "")
    return origin.partition("://")[2].rstrip("/") == host


def _templates() -> Jinja2Templates:
    return Jinja2Templates(env=pages.environment())


# -- parameters ------------------------------------------------------------------------------


def _int_arg(request: Request, name: str, default: int | None, low: int, high: int) -> int | None:
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return default
    if not raw.isdigit() or len(raw) > 9:
        raise HTTPException(400, f"{name} must be a whole number from {low} to {high}")
    value = int(raw)
    if not low <= value <= high:
        raise HTTPException(400, f"{name} must be a whole number from {low} to {high}")
    return value


def _paging(request: Request) -> tuple[int, int]:
    page = _int_arg(request, "page", 1, 1, 10**8)
    size = _int_arg(request, "per_page", PAGE_SIZE, 1, MAX_PAGE_SIZE)
    assert page is not None and size is not None
    return page, size


def _path_id(request: Request, name: str) -> int:
    return int(request.path_params[name])


# -- the application -------------------------------------------------------------------------


async def _form(request: Request, fields: int) -> dict[str, str] | None:
    """A posted form's fields (the last value of each), or ``None`` for a body over
    :data:`MAX_FORM_BYTES` or with more than ``fields`` fields."""
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_FORM_BYTES:
            return None
    try:
        form = parse_qs(body.decode("utf-8", "replace"), max_num_fields=fields)
    except ValueError:  # more fields than the form has
        return None
    return {key: values[-1] for key, values in form.items()}


def create_app(
    engine: Engine | None = None, operator_token: str | None = None, settings: Settings | None = None
) -> Starlette:
    """The dashboard over ``engine`` (default: the configured store, read only); the operator signs
    in with ``operator_token`` (default: ``SIXNIMMT_DASHBOARD_OPERATOR_TOKEN``; empty: nobody).

    ``settings`` (default: the environment's) switch the Play page on (``play``); its games are
    written through an engine of their own on the same store (``engine`` reads only).
    """
    if settings is None:
        from referee.settings import load

        settings = load()
    if operator_token is None:
        operator_token = settings.dashboard_operator_token
    auth = OperatorAuth(operator_token)
    templates = _templates()
    store = data.Store(engine if engine is not None else make_engine(read_only=True))
    playing = settings.play == "on"
    writer = None
    if playing:  # the one writer of the dashboard: games against people
        writer = make_engine(store.engine.url.render_as_string(hide_password=False))
    tables = hosted.Tables(writer, settings) if writer is not None else None

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        if tables is not None:
            await run_in_threadpool(tables.close)
        store.close()
        if engine is None:
            store.engine.dispose()
        if writer is not None:
            writer.dispose()

    def db() -> data.Store:
        return store

    def page(request: Request, name: str, context: dict[str, Any], status: int = 200) -> HTMLResponse:
        context.setdefault("root", request.scope.get("root_path", ""))
        context.setdefault("title", "")
        context.setdefault("operator", viewer_of(request).operator)
        context.setdefault("signin", auth.enabled)
        context.setdefault("play", playing)
        context.setdefault(
            "here_url", request.url.path + (f"?{request.url.query}" if request.url.query else "")
        )
        return templates.TemplateResponse(request, name, context, status_code=status)

    def both(
        template: str, build: Callable[[Request], dict[str, Any]]
    ) -> tuple[Callable[[Request], Response], Callable[[Request], Response]]:
        """A page and its API twin from one function that builds what they show."""

        def html(request: Request) -> Response:
            shown = build(request)
            return page(request, shown.get("_template", template), shown)

        def api(request: Request) -> Response:
            shown = build(request)
            return JSONResponse({k: v for k, v in shown.items() if k != "title" and not k.startswith("_")})

        return html, api

    # -- what each page shows --

    def leagues_view(request: Request) -> dict[str, Any]:
        return data.leagues(db()) | {"title": "Leagues"}

    def league_view(request: Request) -> dict[str, Any]:
        test = sprtview.league_test(db().engine, _path_id(request, "league_id"))
        if test is not None:  # an SPRT test (sixnimmt bot test): its verdict and LLR curve
            return test | {"title": test["league"]["name"], "_template": "sprt.html"}
        shown = data.league(db(), _path_id(request, "league_id"))
        return shown | {"title": shown["league"]["name"]}

    def league_matches_view(request: Request) -> dict[str, Any]:
        number, size = _paging(request)
        shown = data.league_matches(db(), _path_id(request, "league_id"), number, size)
        return shown | {"title": f"Matches of {shown['league']['name']}"}

    def bots_view(request: Request) -> dict[str, Any]:
        return data.bots(db()) | {"title": "Bots"}

    def bot_view(request: Request) -> dict[str, Any]:
        shown = data.bot(db(), _path_id(request, "bot_id"))
        return shown | {"title": shown["bot"]["name"], "_plot": data.rating_plot(shown)}

    def bot_matches_view(request: Request) -> dict[str, Any]:
        number, size = _paging(request)
        version = _int_arg(request, "version", None, 1, 10**8)
        shown = data.bot_matches(db(), _path_id(request, "bot_id"), version, number, size)
        return shown | {"title": f"Matches of {shown['version']['label']}"}

    def live_view(request: Request) -> dict[str, Any]:
        league_id = _int_arg(request, "league", None, 1, 2**31 - 1)
        return data.live(db(), league_id, viewer_of(request)) | {"title": "Live", "_poll_ms": LIVE_POLL_MS}

    def competitions_view(request: Request) -> dict[str, Any]:
        return competitions.competitions(db()) | {"title": "Competitions"}

    def competition_view(request: Request) -> dict[str, Any]:
        shown = competitions.competition(db(), request.path_params["name"])
        return shown | {"title": shown["competition"]["name"]}

    league_list_page, league_list_api = both("leagues.html", leagues_view)
    competition_list_page, competition_list_api = both("competitions.html", competitions_view)
    competition_page, competition_api = both("competition.html", competition_view)
    league_page, league_api = both("league.html", league_view)
    league_matches_page, league_matches_api = both("matches.html", league_matches_view)
    bot_list_page, bot_list_api = both("bots.html", bots_view)
    bot_page, bot_api = both("bot.html", bot_view)
    bot_matches_page, bot_matches_api = both("matches.html", bot_matches_view)
    live_page, live_api = both("live.html", live_view)

    def live_fragment(request: Request) -> Response:
        return page(request, "_live.html", live_view(request))

    # -- the replay viewer --

    def _seat_arg(request: Request, players: int) -> int | None:
        raw = request.query_params.get("seat")
        if raw in (None, "", "all"):
            return None
        seat = _int_arg(request, "seat", None, 0, 10**6)
        if seat is None or seat >= players:
            raise HTTPException(404, f"no seat {raw}: the match has {players} seats")
        return seat

    def _step_arg(request: Request, steps: int, default: int) -> int:
        step = _int_arg(request, "step", default, 0, 10**6)
        assert step is not None
        if step > steps:
            raise HTTPException(404, f"no step {step}: the match has {steps} steps")
        return step

    def replay_page(
        request: Request, info: dict[str, Any], replay: Any, template: str, title: str
    ) -> Response:
        """A stored game's page (a league match's or a game against people): its replay at the
        step and seat the query asks for."""
        seat = _seat_arg(request, replay.players)
        step = _step_arg(request, replay.steps, min(1, replay.steps))
        frame = replay.frame(step, seat, info["names"])
        context = {
            "title": title,
            "match": info,
            "frame": frame,
            "board": board(frame, info["names"]),
            "bulls": replay.bulls(),
            "seat": seat,
            "step": step,
            "steps": replay.steps,
        }
        return page(request, template, context)

    def frames(request: Request, info: dict[str, Any], replay: Any) -> Response:
        """A stored game's replay as JSON: one frame (``step``) or all of them, for a seat or everyone."""
        seat = _seat_arg(request, replay.players)
        if request.query_params.get("step") not in (None, ""):
            step = _step_arg(request, replay.steps, 0)
            return JSONResponse({"match": info, "frame": replay.frame(step, seat, info["names"])})
        every = [replay.frame(step, seat, info["names"]) for step in range(replay.steps + 1)]
        return JSONResponse({"match": info, "seat": seat, "frames": every})

    def match_page(request: Request) -> Response:
        info, replay = data.match(db(), _path_id(request, "match_id"), viewer_of(request))
        return replay_page(request, info, replay, "match.html", f"Match {info['id']}")

    def match_api(request: Request) -> Response:
        info, _ = data.match(db(), _path_id(request, "match_id"), viewer_of(request))
        return JSONResponse({"match": info})

    def replay_api(request: Request) -> Response:
        return frames(request, *data.match(db(), _path_id(request, "match_id"), viewer_of(request)))

    def transcript_api(request: Request) -> Response:
        body = data.transcript(db(), _path_id(request, "match_id"))
        return Response(body, media_type="application/json")

    # -- the operator's sign-in --

    def signin_page(request: Request, target: str, status: int = 200) -> Response:
        context = {"title": "Operator sign-in", "failed": status != 200, "next": target}
        return page(request, "signin.html", context, status)

    def signin_form(request: Request) -> Response:
        return signin_page(
            request, local_path(request.query_params.get("next"), request.scope.get("root_path", ""))
        )

    async def signin(request: Request) -> Response:
        """The form's token: right, a session cookie and back to where the operator was; else a
        bare 401, the same whatever went wrong (no token configured, a wrong one, another site's
        form, a body too big or malformed)."""
        root = request.scope.get("root_path", "")
        form = await _form(request, 4)
        if form is None:
            return signin_page(request, f"{root}/", 401)
        target = local_path(form.get("next", ""), root)
        if not _same_origin(request) or not auth.token_matches(form.get("token", "")):
            return signin_page(request, target, 401)
        response = RedirectResponse(target, status_code=303)
        response.set_cookie(
            SESSION_COOKIE,
            auth.new_session(),
            max_age=SESSION_SECONDS,
            path=f"{root}/",
            secure=_https(request),
            httponly=True,
            samesite="strict",
        )
        return response

    def signout(request: Request) -> Response:
        root = request.scope.get("root_path", "")
        response = RedirectResponse(f"{root}/", status_code=303)
        response.delete_cookie(
            SESSION_COOKIE, path=f"{root}/", secure=_https(request), httponly=True, samesite="strict"
        )
        return response

    # -- games against people --

    def human_match_page(request: Request) -> Response:
        info, replay = data.human_match(db(), _path_id(request, "human_match_id"), viewer_of(request))
        return replay_page(request, info, replay, "people_match.html", f"Game against people #{info['id']}")

    def human_match_api(request: Request) -> Response:
        info, _ = data.human_match(db(), _path_id(request, "human_match_id"), viewer_of(request))
        return JSONResponse({"match": info})

    def human_replay_api(request: Request) -> Response:
        return frames(
            request, *data.human_match(db(), _path_id(request, "human_match_id"), viewer_of(request))
        )

    def human_transcript_api(request: Request) -> Response:
        body = data.human_transcript(db(), _path_id(request, "human_match_id"))
        return Response(body, media_type="application/json")

    # -- the Play page (SIXNIMMT_PLAY=on) --

    def lobby(
        request: Request, form: dict[str, str] | None = None, error: str | None = None, status: int = 200
    ) -> Response:
        assert tables is not None
        choices = hosted.variants()
        wanted = (form or {}).get("variant") or request.query_params.get("variant")
        chosen = next((v for v in choices if v["name"] == wanted), None)
        if wanted and chosen is None:
            with contextlib.suppress(hosted.PlayError):
                chosen = next((v for v in choices if v["name"] == hosted.variant_name(wanted)), None)
        token = request.cookies.get(CSRF_COOKIE) or secrets.token_urlsafe(24)
        context = {
            "title": "Play",
            "variants": choices,
            "chosen": chosen,
            "playable": [v for v in data.playable(db()) if chosen and v["variant"] == chosen["name"]],
            "csrf": token,
            "tables": {"playing": tables.playing(), "max": tables.max_tables},
            "decision_ms": settings.human_decision_ms,
            "bank_ms": settings.human_bank_ms,
            "max_opponents": hosted.MAX_OPPONENTS,
            "error": error,
            "form": form or {},
        }
        response = page(request, "play_lobby.html", context, status)
        response.set_cookie(
            CSRF_COOKIE,
            token,
            max_age=SESSION_SECONDS,
            path=f"{request.scope.get('root_path', '')}/play",
            secure=_https(request),
            httponly=True,
            samesite="strict",
        )
        return response

    def lobby_page(request: Request) -> Response:
        return lobby(request)

    def lobby_api(request: Request) -> Response:
        assert tables is not None
        return JSONResponse(
            {
                "variants": hosted.variants(),
                "playable": data.playable(db()),
                "tables": {"playing": tables.playing(), "max": tables.max_tables},
                "time_control": {
                    "decision_ms": settings.human_decision_ms,
                    "bank_ms": settings.human_bank_ms,
                },
            }
        )

    async def sit_down(request: Request) -> Response:
        """The Play form: a table for the visitor, and off to its page (303); a form from another
        site, or without this browser's anti-forgery value, is refused (403)."""
        assert tables is not None
        form = await _form(request, 40)
        if form is None:
            return _error(request, 400, "the form is too large")
        cookie = request.cookies.get(CSRF_COOKIE, "")
        sent = form.get("csrf", "")
        if not (_same_origin(request) and cookie and hmac.compare_digest(cookie.encode(), sent.encode())):
            return _error(
                request,
                403,
                "this form was not sent from this dashboard's Play page: open the Play page and sit down"
                " again",
            )
        viewer = viewer_of(request)
        try:
            entrant = hosted.person_name(form.get("name"))
            versions = await run_in_threadpool(repo.playable_versions, db().engine)
            asked = hosted.sitting(form, versions, entrant=entrant, operator=viewer.operator)
            table = tables.sit(asked, request.scope.get("root_path", ""))
        except hosted.PlayError as exc:
            return lobby(request, form, str(exc), 400)
        except hosted.TablesFull as exc:
            response = _error(
                request,
                429,
                f"{exc} (the most this dashboard plays at once); try again in a few minutes",
            )
            response.headers["retry-after"] = "60"
            return response
        root = request.scope.get("root_path", "")
        return RedirectResponse(f"{root}/play/tables/{table.id}", status_code=303)

    def _table(request: Request) -> hosted.HostedTable:
        assert tables is not None
        found = tables.get(request.path_params["table_id"])
        if found is None:
            raise HTTPException(
                404, "no such table (a table's page lives as long as the dashboard that runs it)"
            )
        return found

    def _served(answer: tuple[int, str, bytes, dict[str, str]]) -> Response:
        status, media_type, body, headers = answer
        return Response(body, status_code=status, media_type=media_type, headers=headers)

    def table_page(request: Request) -> Response:
        table = _table(request)
        root = request.scope.get("root_path", "")
        return _served(
            seat_pages.page(
                table.seat,
                api=f"{root}/play/tables/{table.id}",
                root=root,
                layout="base.html",
                title=f"{table.sitting.entrant} at the table",
                operator=viewer_of(request).operator,
                signin=auth.enabled,
                here_url=request.url.path,
                play=True,
            )
        )

    def table_state(request: Request) -> Response:
        table = _table(request)
        query = {key: request.query_params.getlist(key) for key in request.query_params}
        return _served(seat_pages.state(table.seat, query, request.scope.get("root_path", "")))

    async def table_choose(request: Request) -> Response:
        table = _table(request)
        body = b""
        async for chunk in request.stream():
            body += chunk
            if len(body) > seat_pages.MAX_CHOICE_BYTES:
                break
        return _served(seat_pages.choose(table.seat, body, request.headers.get("content-type")))

    def table_api(request: Request) -> Response:
        shown = _table(request).to_json()
        if not viewer_of(request).may_read_errors():  # it can name paths and hosts, as a block's can
            shown["error_hidden"], shown["error"] = shown["error"] is not None, None
        return JSONResponse({"table": shown})

    # -- operations --

    def healthz(request: Request) -> Response:
        try:
            data.healthy(db())
        except SQLAlchemyError as exc:
            return JSONResponse({"status": "unavailable", "error": type(exc).__name__}, status_code=503)
        return JSONResponse({"status": "ok"})

    def metrics(request: Request) -> Response:
        body, content_type = exposition()
        return Response(body, media_type=content_type)

    # -- errors --

    def _error(request: Request, status: int, message: str) -> Response:
        if request.url.path.startswith("/api/") or request.url.path.startswith("/live/fragment"):
            return JSONResponse({"error": message}, status_code=status)
        titles = {
            400: "Bad request",
            403: "Forbidden",
            404: "Not found",
            405: "Method not allowed",
            429: "Too many tables",
        }
        context = {"title": titles.get(status, "Error"), "status": status, "message": message}
        return page(request, "error.html", context, status)

    def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        detail = exc.detail if exc.status_code != 404 or exc.detail != "Not Found" else "no such page"
        return _error(request, exc.status_code, str(detail))

    def not_found(request: Request, exc: Exception) -> Response:
        return _error(request, 404, str(exc))

    def broken_transcript(request: Request, exc: Exception) -> Response:
        return _error(request, 500, f"this match's transcript does not replay: {exc}")

    def server_error(request: Request, exc: Exception) -> Response:
        return _error(request, 500, "the dashboard failed to answer; the error is in its log")

    routes = [
        Route("/", league_list_page, name="leagues"),
        Route("/leagues/{league_id:int}", league_page),
        Route("/leagues/{league_id:int}/matches", league_matches_page),
        Route("/competitions", competition_list_page),
        Route("/competitions/{name:path}", competition_page),
        Route("/bots", bot_list_page),
        Route("/bots/{bot_id:int}", bot_page),
        Route("/bots/{bot_id:int}/matches", bot_matches_page),
        Route("/matches/{match_id:int}", match_page),
        Route("/live", live_page),
        Route("/live/fragment", live_fragment),
        Route("/signin", signin_form, methods=["GET"]),
        Route("/signin", signin, methods=["POST"]),
        Route("/signout", signout, methods=["POST"]),
        Route("/api/leagues", league_list_api),
        Route("/api/leagues/{league_id:int}", league_api),
        Route("/api/leagues/{league_id:int}/matches", league_matches_api),
        Route("/api/competitions", competition_list_api),
        Route("/api/competitions/{name:path}", competition_api),
        Route("/api/bots", bot_list_api),
        Route("/api/bots/{bot_id:int}", bot_api),
        Route("/api/bots/{bot_id:int}/matches", bot_matches_api),
        Route("/api/matches/{match_id:int}", match_api),
        Route("/api/matches/{match_id:int}/replay", replay_api),
        Route("/api/matches/{match_id:int}/transcript", transcript_api),
        Route("/api/live", live_api),
        Route("/human-matches/{human_match_id:int}", human_match_page),
        Route("/api/human-matches/{human_match_id:int}", human_match_api),
        Route("/api/human-matches/{human_match_id:int}/replay", human_replay_api),
        Route("/api/human-matches/{human_match_id:int}/transcript", human_transcript_api),
        Route("/healthz", healthz),
        Route("/metrics", metrics),
        Mount("/static", StaticFiles(directory=pages.STATIC), name="static"),
    ]
    if tables is not None:  # SIXNIMMT_PLAY=on: otherwise none of these routes exists (404)
        routes += [
            Route("/play", lobby_page, methods=["GET"]),
            Route("/play", sit_down, methods=["POST"]),
            Route("/play/tables/{table_id:str}", table_page, methods=["GET"]),
            Route("/play/tables/{table_id:str}/state", table_state, methods=["GET"]),
            Route("/play/tables/{table_id:str}/choose", table_choose, methods=["POST"]),
            Route("/api/play", lobby_api),
            Route("/api/play/tables/{table_id:str}", table_api),
        ]
    app = Starlette(
        routes=routes,
        lifespan=lifespan,
        exception_handlers={
            HTTPException: http_error,
            NotFoundError: not_found,
            TranscriptError: broken_transcript,
            Exception: server_error,
        },
    )
    app.add_middleware(OperatorAccess, auth=auth)
    app.add_middleware(SecurityHeaders)
    app.add_middleware(MetricsMiddleware)
    return app
