"""The dashboard's web application: server-rendered pages, the JSON API under ``/api``,
``/healthz`` and ``/metrics``, over the league store (read only).

Every page has an API twin that returns what the page shows. Unknown ids are 404s (a page for
people, ``{"error": …}`` for the API); malformed parameters are 400s.

Seats' fault details (reasons, exit, stderr) are the operator's alone (:mod:`dashboard.access`):
``/signin`` trades the operator token for a session cookie, the API takes it as a Bearer token,
and wrong credentials are a bare 401 on every route.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any
from urllib.parse import parse_qs

from sqlalchemy import Engine
from sqlalchemy.exc import SQLAlchemyError
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

from dashboard import data, pages, sprtview
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
from referee.rules.errors import TranscriptError
from workers.store.engine import make_engine
from workers.store.repo import NotFoundError

PAGE_SIZE = 50
MAX_PAGE_SIZE = 200
LIVE_POLL_MS = 1500
MAX_FORM_BYTES = 4096
"""The sign-in form's largest body; a bigger one is a failed sign-in, unread."""


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


def create_app(engine: Engine | None = None, operator_token: str | None = None) -> Starlette:
    """The dashboard over ``engine`` (default: the configured store, read only); the operator signs
    in with ``operator_token`` (default: ``SIXNIMMT_DASHBOARD_OPERATOR_TOKEN``; empty: nobody)."""
    if operator_token is None:
        from referee.settings import load

        operator_token = load().dashboard_operator_token
    auth = OperatorAuth(operator_token)
    templates = _templates()
    store = data.Store(engine if engine is not None else make_engine(read_only=True))

    @contextlib.asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        yield
        store.close()
        if engine is None:
            store.engine.dispose()

    def db() -> data.Store:
        return store

    def page(request: Request, name: str, context: dict[str, Any], status: int = 200) -> HTMLResponse:
        context.setdefault("root", request.scope.get("root_path", ""))
        context.setdefault("title", "")
        context.setdefault("operator", viewer_of(request).operator)
        context.setdefault("signin", auth.enabled)
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

    league_list_page, league_list_api = both("leagues.html", leagues_view)
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

    def match_page(request: Request) -> Response:
        info, replay = data.match(db(), _path_id(request, "match_id"), viewer_of(request))
        seat = _seat_arg(request, replay.players)
        step = _step_arg(request, replay.steps, min(1, replay.steps))
        frame = replay.frame(step, seat, info["names"])
        context = {
            "title": f"Match {info['id']}",
            "match": info,
            "frame": frame,
            "board": board(frame, info["names"]),
            "bulls": replay.bulls(),
            "seat": seat,
            "step": step,
            "steps": replay.steps,
        }
        return page(request, "match.html", context)

    def match_api(request: Request) -> Response:
        info, _ = data.match(db(), _path_id(request, "match_id"), viewer_of(request))
        return JSONResponse({"match": info})

    def replay_api(request: Request) -> Response:
        info, replay = data.match(db(), _path_id(request, "match_id"), viewer_of(request))
        seat = _seat_arg(request, replay.players)
        if request.query_params.get("step") not in (None, ""):
            step = _step_arg(request, replay.steps, 0)
            return JSONResponse({"match": info, "frame": replay.frame(step, seat, info["names"])})
        frames = [replay.frame(step, seat, info["names"]) for step in range(replay.steps + 1)]
        return JSONResponse({"match": info, "seat": seat, "frames": frames})

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
        body = b""
        async for chunk in request.stream():
            body += chunk
            if len(body) > MAX_FORM_BYTES:
                return signin_page(request, f"{root}/", 401)
        try:
            form = parse_qs(body.decode("utf-8", "replace"), max_num_fields=4)
        except ValueError:  # more fields than the form has
            return signin_page(request, f"{root}/", 401)
        target = local_path((form.get("next") or [""])[0], root)
        if not _same_origin(request) or not auth.token_matches((form.get("token") or [""])[0]):
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
        titles = {400: "Bad request", 404: "Not found", 405: "Method not allowed"}
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
        Route("/api/bots", bot_list_api),
        Route("/api/bots/{bot_id:int}", bot_api),
        Route("/api/bots/{bot_id:int}/matches", bot_matches_api),
        Route("/api/matches/{match_id:int}", match_api),
        Route("/api/matches/{match_id:int}/replay", replay_api),
        Route("/api/matches/{match_id:int}/transcript", transcript_api),
        Route("/api/live", live_api),
        Route("/healthz", healthz),
        Route("/metrics", metrics),
        Mount("/static", StaticFiles(directory=pages.STATIC), name="static"),
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
