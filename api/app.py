"""The API's application (FastAPI): its routes, authentication, limits and JSON errors (docs/api.md).

Every route under ``/v1/`` but the public ones (leagues and their standings) takes
``Authorization: Bearer KEY``, an account's API key (``sixnimmt account key create``). A key reads
and changes only its own account's bots: another account's bot, version, submission or match is a
404, as one that does not exist. Errors are JSON, ``{"error": "...", "status": N}``.
"""

import contextlib
import datetime as dt
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, PlainTextResponse
from sqlalchemy import Engine
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException

from api.limits import make_buckets
from api.metrics import instrument
from api.validation import Validator, make_validator
from referee.settings import Settings
from workers.bots import accounts, competitions
from workers.bots.artifacts import SubmissionError, SubmissionLimits
from workers.bots.submit import check_submitted_name, checked_archive
from workers.store import repo
from workers.store.repo.accounts import REFUSED

log = logging.getLogger("sixnimmt.api")

LOST_AFTER = dt.timedelta(hours=1)
"""A submission pending for this long at an API's start lost its validation (the API that ran it
stopped): it is marked invalid. Younger ones may be another API process's, still running."""
TAR_OVERHEAD = 512 * 3
"""What a tar adds per file at most, beyond the file's bytes (its header, PAX header, padding)."""


class ApiError(Exception):
    """An error answered as ``{"error": message, "status": status}``."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.headers = status, message, headers


def max_upload_bytes(settings: Settings) -> int:
    """The largest body an upload may have: the setting, else the biggest archive the limits allow."""
    if settings.api_max_upload_bytes:
        return settings.api_max_upload_bytes
    return settings.bot_max_bytes + settings.submit_max_files * TAR_OVERHEAD + 10_240


@dataclass(frozen=True, slots=True)
class Uploads:
    """The one path of an upload, which ``POST /v1/submissions`` and the upload form share
    (``app.state.uploads``): the body's ``limit``, the daily quota's check, :func:`accept` of a body
    read within the limit, and the refusal stored before a body is read. Each raises :class:`ApiError`."""

    limit: int
    check_quota: Callable[[accounts.Caller], Awaitable[None]]
    accept: Callable[[accounts.Caller, str, str, str | None, bytes], Awaitable[dict[str, Any]]]
    refuse: Callable[[accounts.Caller, str, str, str], Awaitable[None]]


class Counters:
    """What the API refused, since it started (``GET /v1/health`` shows them)."""

    def __init__(self) -> None:
        self.refused_keys = 0
        self.rate_limited = 0
        self.refused_uploads = 0


def create_app(
    engine: Engine,
    settings: Settings,
    *,
    validator: Validator | None = None,
    check_games: int = 8,
    sandbox: bool = True,
) -> FastAPI:
    """The API over ``engine``; ``validator`` runs the check games (default: a pool of
    ``SIXNIMMT_API_VALIDATION_WORKERS`` threads in this process, closed with the app; the league's
    Celery workers with ``SIXNIMMT_BROKER_URL``: api.validation)."""
    own_validator = validator is None
    if validator is None:
        validator = make_validator(engine, settings, games=check_games, sandbox=sandbox)
    validator.recover(LOST_AFTER)
    # In Redis when the settings name one (shared by the API's replicas), else this process's.
    per_key = make_buckets(settings, "key", settings.api_rate_per_s, settings.api_burst)
    per_address = make_buckets(settings, "address", settings.api_rate_per_s, settings.api_burst)
    failures = make_buckets(settings, "failures", 1.0, settings.api_auth_failures_burst)
    counters = Counters()
    upload_limit = max_upload_bytes(settings)
    limits = SubmissionLimits.from_settings(settings)

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        try:
            yield
        finally:
            if own_validator:
                validator.close()

    app = FastAPI(
        lifespan=lifespan,
        title="sixnimmt-arena API",
        version="1",
        description="Submit bots, follow their validation, choose active versions, read your bots' logs"
        " and public standings. Authenticate with `Authorization: Bearer KEY` (docs/api.md).",
    )
    app.state.engine, app.state.validator, app.state.counters = engine, validator, counters
    instrument(app, engine)  # GET /metrics, requests by route and status (api.metrics)
    app.state.per_key, app.state.failures = per_key, failures  # the web pages' limits too (api/pages.py)

    @app.exception_handler(ApiError)
    async def _api_error(request: Request, exc: ApiError) -> JSONResponse:
        return JSONResponse({"error": exc.message, "status": exc.status}, exc.status, headers=exc.headers)

    @app.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        return JSONResponse({"error": str(exc.detail), "status": exc.status_code}, exc.status_code)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        first = exc.errors()[0] if exc.errors() else {}
        where = ".".join(str(p) for p in first.get("loc", ()) if p not in ("query", "path", "body"))
        message = f"{where}: {first.get('msg', 'invalid request')}" if where else "invalid request"
        return JSONResponse({"error": message, "status": 422}, 422)

    @app.exception_handler(repo.NotFoundError)
    async def _not_found(request: Request, exc: repo.NotFoundError) -> JSONResponse:
        return JSONResponse({"error": str(exc), "status": 404}, 404)

    @app.exception_handler(repo.QuotaError)
    async def _quota(request: Request, exc: repo.QuotaError) -> JSONResponse:
        return JSONResponse(
            {"error": str(exc), "status": 429}, 429, headers={"Retry-After": _until_midnight()}
        )

    @app.exception_handler(repo.ConflictError)
    async def _conflict(request: Request, exc: repo.ConflictError) -> JSONResponse:
        return JSONResponse({"error": str(exc), "status": 409}, 409)

    @app.exception_handler(Exception)
    async def _failed(request: Request, exc: Exception) -> JSONResponse:
        log.exception("%s %s failed", request.method, request.url.path)
        return JSONResponse({"error": "the server failed; it is logged", "status": 500}, 500)

    def client_of(request: Request) -> str:
        return request.client.host if request.client else "unknown"

    async def caller(request: Request) -> accounts.Caller:
        """The account of the request's key; 401 without a live key, 429 past the limits."""
        address = client_of(request)
        header = request.headers.get("authorization", "")
        scheme, _, key = header.partition(" ")
        found = None
        if scheme.lower() == "bearer" and key.strip():
            found = await run_in_threadpool(accounts.authenticate, engine, key.strip())
        if found is None:
            counters.refused_keys += 1
            key_id = accounts._key_id_of(key.strip())[:16] if key.strip() else "-"
            if not failures.take(address):
                counters.rate_limited += 1
                log.warning(
                    "refused key %s from %s: rate-limited (%d keys refused since start)",
                    key_id,
                    address,
                    counters.refused_keys,
                )
                raise ApiError(
                    429,
                    "too many requests with a wrong key from this address",
                    {"Retry-After": str(failures.retry_after(address))},
                )
            log.warning(
                "refused key %s from %s (%d keys refused since start)", key_id, address, counters.refused_keys
            )
            raise ApiError(
                401,
                "a live API key is needed: Authorization: Bearer KEY" if header else "no API key given",
                {"WWW-Authenticate": "Bearer"},
            )
        if not per_key.take(found.key_id):
            counters.rate_limited += 1
            log.warning("key %s of %s rate-limited", found.key_id, found.account)
            raise ApiError(
                429,
                f"more than {settings.api_rate_per_s} requests a second with this key",
                {"Retry-After": str(per_key.retry_after(found.key_id))},
            )
        return found

    Caller = Annotated[accounts.Caller, Depends(caller)]

    async def public(request: Request) -> None:
        """The public routes' rate: per client address, as a key's."""
        address = client_of(request)
        if not per_address.take(address):
            counters.rate_limited += 1
            raise ApiError(
                429,
                f"more than {settings.api_rate_per_s} requests a second from this address",
                {"Retry-After": str(per_address.retry_after(address))},
            )

    def run(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Awaitable[Any]:
        return run_in_threadpool(function, *args, **kwargs)

    @app.get("/healthz", include_in_schema=False)
    async def healthz() -> dict[str, Any]:
        return {"ok": True}

    @app.get("/v1/me", summary="The key's account, its quota and limits")
    async def me(who: Caller) -> dict[str, Any]:
        used = await run(repo.submissions_since, engine, who.account_id, _midnight())
        return {
            "account": who.account,
            "display_name": who.display_name,
            "key_id": who.key_id,
            "submissions_today": used,
            "submissions_per_day": settings.api_submissions_per_day,
            "active_per_account": settings.api_active_per_account,
            "max_upload_bytes": upload_limit,
        }

    @app.post(
        "/v1/submissions",
        status_code=202,
        summary="Upload a bot (the archive `sixnimmt bot submit --server` makes) to be validated",
        openapi_extra={
            "requestBody": {
                "required": True,
                "content": {"application/x-tar": {"schema": {"type": "string", "format": "binary"}}},
            }
        },
    )
    async def submit(
        request: Request,
        who: Caller,
        name: Annotated[str, Query(max_length=1000, description="the bot's name; each upload adds NAME@N")],
        variant: Annotated[str, Query(max_length=40)] = "classic",
        entry: Annotated[str | None, Query(max_length=300, description="e.g. main.py:MyBot")] = None,
        competition: Annotated[
            str | None, Query(max_length=100, description="made for this competition: enters it, its quota")
        ] = None,
    ) -> dict[str, Any]:
        entered = None
        if competition is not None:  # frozen (409), another variant (409), its daily quota (429)
            entered = await run(competitions.check_submission, engine, competition, who.account_id, variant)
        declared = request.headers.get("content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > upload_limit):
            await run(_refuse, who, name, variant, f"the upload is larger than {upload_limit} bytes")
            raise ApiError(413, f"the upload is {declared} bytes; the limit is {upload_limit}")
        await check_quota(who)
        chunks, size = [], 0
        async for chunk in request.stream():  # never more than the limit is read
            size += len(chunk)
            if size > upload_limit:
                await run(_refuse, who, name, variant, f"the upload is larger than {upload_limit} bytes")
                raise ApiError(
                    413, f"the upload is more than {upload_limit} bytes; the limit is {upload_limit}"
                )
            chunks.append(chunk)
        made = await accept(who, name, variant, entry, b"".join(chunks))
        if entered is not None:
            await run(repo.set_submission_competition, engine, made["id"], entered.id)
            made["competition"] = entered.name
        return made

    async def check_quota(who: accounts.Caller) -> None:
        """429 once the account's accepted uploads of the day reach the quota."""
        used = await run(repo.submissions_since, engine, who.account_id, _midnight())
        if used >= settings.api_submissions_per_day:
            raise ApiError(
                429,
                f"daily submission quota of {settings.api_submissions_per_day} used; next at 00:00 UTC",
                {"Retry-After": _until_midnight()},
            )

    async def accept(
        who: accounts.Caller, name: str, variant: str, entry: str | None, content: bytes
    ) -> dict[str, Any]:
        """An upload read within the limit: checked as ``bot submit`` checks it, stored pending and
        queued for validation, or refused (413, 422) with the refusal stored. The one path of every
        upload: ``POST /v1/submissions`` and the participant's upload form (:mod:`api.pages`)."""
        if len(content) > upload_limit:
            await run(_refuse, who, name, variant, f"the upload is larger than {upload_limit} bytes")
            raise ApiError(413, f"the upload is {len(content)} bytes; the limit is {upload_limit}")
        try:
            check_submitted_name(name)
            await run(repo.may_submit, engine, who.account_id, name)
            new = await run(checked_archive, content, name, variant=variant, entry=entry, limits=limits)
        except (SubmissionError, repo.BadNameError) as exc:
            await run(_refuse, who, name, variant, str(exc))
            raise ApiError(422, str(exc)) from None
        submission_id = await run(
            repo.add_submission,
            engine,
            who.account_id,
            who.key_id,
            name,
            variant,
            sha256=new.sha256,
            entry_point=new.entry_point,
            per_day=(settings.api_submissions_per_day, _midnight()),
        )
        await run(validator.submit, submission_id, new)
        log.info(
            "submission %d: %s (%s) by %s, %d bytes", submission_id, name, variant, who.account, len(content)
        )
        return await run(repo.submission, engine, who.account_id, submission_id, logs=False)

    def _refuse(who: accounts.Caller, name: str, variant: str, reason: str) -> None:
        counters.refused_uploads += 1
        log.warning("upload of %r by %s refused: %s", name[:100], who.account, reason)
        repo.add_submission(engine, who.account_id, who.key_id, name, variant, status=REFUSED, reason=reason)

    async def refuse(who: accounts.Caller, name: str, variant: str, reason: str) -> None:
        await run(_refuse, who, name, variant, reason)

    app.state.uploads = Uploads(upload_limit, check_quota, accept, refuse)
    from api.pages import add_pages  # here: api.pages imports this module's ApiError

    add_pages(app, engine, settings)  # the participant's web pages, /account (docs/api.md)

    @app.get("/v1/submissions", summary="Your submissions, newest first")
    async def submissions(who: Caller) -> list[dict[str, Any]]:
        return await run(repo.list_submissions, engine, who.account_id)

    @app.get("/v1/submissions/{submission_id}", summary="A submission: its validation, report and transcript")
    async def submission(who: Caller, submission_id: int) -> dict[str, Any]:
        return await run(repo.submission, engine, who.account_id, submission_id)

    @app.get("/v1/versions", summary="Your bot versions: active or not, rank where ranked")
    async def versions(who: Caller) -> list[dict[str, Any]]:
        return await run(repo.owned_versions, engine, who.account_id)

    @app.post("/v1/versions/{version:path}/activate", summary="Make a version active")
    async def activate(who: Caller, version: str) -> dict[str, Any]:
        await run(competitions.check_activation, engine, who.account_id, version)  # its competitions' limit
        return await run(
            repo.set_active, engine, who.account_id, version, True, max_active=settings.api_active_per_account
        )

    @app.post("/v1/versions/{version:path}/deactivate", summary="Make a version inactive")
    async def deactivate(who: Caller, version: str) -> dict[str, Any]:
        return await run(
            repo.set_active,
            engine,
            who.account_id,
            version,
            False,
            max_active=settings.api_active_per_account,
        )

    @app.get(
        "/v1/versions/{version:path}/faults",
        summary="A version's league seats with faults: reasons, exit, stderr tail",
    )
    async def faults(who: Caller, version: str) -> list[dict[str, Any]]:
        return await run(repo.owned_faults, engine, who.account_id, version)

    @app.get(
        "/v1/matches/{match_id}/transcript",
        summary="The transcript of a league match one of your versions played",
        response_class=PlainTextResponse,
    )
    async def transcript(who: Caller, match_id: int) -> str:
        return str(await run(repo.owned_transcript, engine, who.account_id, match_id))

    @app.get("/v1/competitions", summary="Every competition (public)", dependencies=[Depends(public)])
    async def competition_list() -> list[dict[str, Any]]:
        return await run(repo.list_competitions, engine)

    @app.get(
        "/v1/competitions/{name}",
        summary="A competition: settings, state, season and final standings (public)",
        dependencies=[Depends(public)],
    )
    async def competition_page(name: str) -> dict[str, Any]:
        return await run(repo.competition, engine, name)

    @app.post("/v1/competitions/{name}/entries", summary="Enter the key's account in a competition")
    async def competition_entry(who: Caller, name: str) -> dict[str, Any]:
        return await run(competitions.enter, engine, name, who.account_id)

    @app.get("/v1/leagues", summary="Every league (public)", dependencies=[Depends(public)])
    async def leagues() -> list[dict[str, Any]]:
        return await run(repo.list_leagues, engine)

    @app.get(
        "/v1/leagues/{league:path}/standings",
        summary="A league's stored table (public)",
        dependencies=[Depends(public)],
    )
    async def standings(league: str) -> dict[str, Any]:
        return await run(repo.public_standings, engine, league)

    return app


@contextlib.contextmanager
def serving(app: FastAPI, host: str = "127.0.0.1") -> Iterator[str]:
    """Serve ``app`` with uvicorn on a free port of ``host``, in a thread, until the block ends; its
    URL (the tests' and benchmarks' real server, over a real socket)."""
    import socket
    import threading
    import time

    import uvicorn

    # IPPROTO_TCP named: asyncio sets TCP_NODELAY on the connections of a socket that says so (as
    # uvicorn's own socket does), without which each answer waits for the client's delayed ACK.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind((host, 0))
    sock.listen(128)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 120
        while not server.started and thread.is_alive() and time.monotonic() < deadline:
            time.sleep(0.01)
        if not server.started:
            raise RuntimeError("the API did not start")
        yield f"http://{host}:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(60)
        sock.close()


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


def _until_midnight() -> str:
    """Seconds until the next UTC midnight, for ``Retry-After``."""
    return str(int((_midnight() + dt.timedelta(days=1) - _now()).total_seconds()) + 1)


def _midnight() -> dt.datetime:
    """The start of today, UTC: when the daily quota starts again."""
    return _now().replace(hour=0, minute=0, second=0, microsecond=0)
