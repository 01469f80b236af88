"""The participant's web pages, under ``/account`` of the API's server (docs/api.md, "On the web").

A participant signs in with one of its account's API keys and gets a session: an HttpOnly,
SameSite=Strict cookie (Secure over HTTPS) that names the key's id, never the key, with its expiry
and a random nonce, signed with ``SIXNIMMT_API_SESSION_SECRET`` (:class:`Sessions`), so every API
replica accepts it. A session lasts :data:`SESSION_SECONDS` and ends when its key is revoked
(checked on every request); signing out removes the cookie and makes the process that answered
forget it. The pages show the account's versions (validation, active or not, rank), each
submission with its validation report, faults, the end of its stderr and its transcript, each
version's league faults, and an upload form; buttons activate and deactivate versions.

Every form carries an anti-forgery value: the session's own (the sign-in form: a random value in
a SameSite=Strict cookie of its own), checked with the request's ``Origin``; a forged form is a 403
and changes nothing. The upload form's file becomes the archive ``POST /v1/submissions`` takes
(:func:`api.forms.as_tar`) and goes through the API's one path for uploads
(:class:`api.app.Uploads`): the same limits, quota, refusals stored and validation. A page's
requests spend its key's rate (``SIXNIMMT_API_RATE_PER_S``); wrong keys at the sign-in form count
against the address as at the API. The pages run no inline script (a strict content security
policy); a pending validation's page asks for its state every few seconds and reloads once it ends.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import logging
import secrets
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

import jinja2
from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from sqlalchemy import Engine, select
from starlette.concurrency import run_in_threadpool

from api import forms
from api.app import ApiError
from referee.rules.registry import VARIANTS
from referee.settings import Settings
from workers.bots import accounts, competitions
from workers.play.faults import describe_exit, parse_detail
from workers.store import repo
from workers.store.schema import api_keys, bot_accounts

log = logging.getLogger("sixnimmt.api")

HERE = Path(__file__).parent
TEMPLATES = HERE / "templates"
STATIC = HERE / "static"

SESSION_COOKIE = "sixnimmt_account"
SIGNIN_COOKIE = "sixnimmt_account_form"
"""The sign-in form's anti-forgery cookie (before there is a session)."""
SESSION_SECONDS = 12 * 3600
MAX_SESSIONS = 50_000
"""Signed-out sessions this process remembers (the oldest forgotten first)."""
MAX_FORM_BYTES = 4096
"""The sign-in and button forms' largest body."""
FORM_SLACK = 16 * 1024
"""What the upload form may hold besides its file: its fields and the multipart headers."""
POLL_MS = 2000

SECURITY_HEADERS = {
    "content-security-policy": "default-src 'self'; script-src 'self'; style-src 'self';"
    " img-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'",
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "same-origin",
    "cache-control": "no-store",
}
"""The dashboard's headers (no inline script or style runs), and no cache keeps a private page."""


@dataclass(frozen=True, slots=True)
class Session:
    """A signed-in browser: its account, the key it signed in with, its forms' anti-forgery value."""

    caller: accounts.Caller
    csrf: str


class Sessions:
    """Participants' web sessions: a cookie ``KEY_ID.EXPIRES.NONCE.SIGNATURE``, signed (HMAC-SHA256)
    with a key derived from ``SIXNIMMT_API_SESSION_SECRET``, so every API replica with the same
    secret accepts it (without one, a random key of this process: its sessions end with it). The
    key itself is never in it. A session's forms carry a value derived from its cookie with the
    same key. Signing out forgets the cookie in this process and removes it from the browser."""

    def __init__(self, secret: str, seconds: int = SESSION_SECONDS, keep: int = MAX_SESSIONS) -> None:
        seed = secret.encode() if secret else secrets.token_bytes(32)
        self._key = hmac.new(seed, _SESSION_LABEL, hashlib.sha256).digest()
        self.seconds, self.keep = seconds, keep
        self._lock = threading.Lock()
        self._ended: OrderedDict[str, None] = OrderedDict()

    def new(self, key_id: str) -> str:
        body = f"{key_id}.{int(time.time()) + self.seconds}.{secrets.token_urlsafe(16)}"
        return f"{body}.{self._sign(body)}"

    def key_id(self, value: str | None) -> str | None:
        """The key id of a session cookie this key signed, not expired nor signed out; else ``None``."""
        if not value or len(value) > 200:
            return None
        body, _, signature = value.rpartition(".")
        parts = body.split(".")
        if len(parts) != 3 or not parts[1].isdigit() or len(parts[1]) > 12:
            return None
        if not hmac.compare_digest(self._sign(body).encode(), signature.encode("utf-8", "replace")):
            return None
        with self._lock:
            if int(parts[1]) <= time.time() or value in self._ended:
                return None
        return parts[0]

    def csrf(self, value: str) -> str:
        """The anti-forgery value of the forms of the session ``value``."""
        return self._sign(f"csrf {value}")[:32]

    def end(self, value: str | None) -> None:
        with self._lock:
            self._ended[value or ""] = None
            while len(self._ended) > self.keep:
                self._ended.popitem(last=False)

    def _sign(self, body: str) -> str:
        return hmac.new(self._key, body.encode(), hashlib.sha256).hexdigest()


_SESSION_LABEL = b"sixnimmt api participant session v1"


def live_caller(engine: Engine, key_id: str) -> accounts.Caller | None:
    """The account of the key ``key_id`` if it is not revoked."""
    with engine.connect() as conn:
        row = conn.execute(
            select(api_keys.c.key_id, bot_accounts.c.id, bot_accounts.c.name, bot_accounts.c.display_name)
            .join(bot_accounts, bot_accounts.c.id == api_keys.c.account_id)
            .where(api_keys.c.key_id == key_id, api_keys.c.revoked_at.is_(None))
        ).first()
    if row is None:
        return None
    return accounts.Caller(row.key_id, int(row.id), row.name, row.display_name or row.name)


class PageError(Exception):
    """An error answered with the error page."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status, self.message, self.headers = status, message, headers


def environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=True,  # names, reasons and stderr are the participants': hostile
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["when"] = lambda value: value.replace("T", " ").split(".")[0].split("+")[0] if value else "–"
    env.filters["num"] = lambda value, digits=2: (
        "–" if value is None else f"{value:.{digits}f}" if isinstance(value, float) else str(value)
    )
    return env


def _https(request: Request) -> bool:
    """Over HTTPS, directly or through a TLS proxy (which can only add the cookie's Secure flag)."""
    forwarded = request.headers.get("x-forwarded-proto", "").split(",")[0].strip().lower()
    return request.url.scheme == "https" or forwarded == "https"


def same_origin(request: Request) -> bool:
    """Whether a form came from this site: no ``Origin`` (an old browser), or this host's."""
    origin = request.headers.get("origin")
    if origin is None:
        return True
    return origin.partition("://")[2].rstrip("/") == request.headers.get("host", "")


def _matches(expected: str, sent: str) -> bool:
    return bool(expected) and hmac.compare_digest(expected.encode(), sent.encode("utf-8", "replace"))


async def _small_form(request: Request) -> dict[str, str]:
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_FORM_BYTES:
            raise PageError(413, "the form is too large")
    try:
        form = parse_qs(body.decode("utf-8", "replace"), max_num_fields=8)
    except ValueError:
        raise PageError(400, "the form has too many fields") from None
    return {key: values[-1] for key, values in form.items()}


def add_pages(app: FastAPI, engine: Engine, settings: Settings) -> Sessions:
    """Serve the participant's pages under ``/account`` of ``app`` (:func:`api.app.create_app`'s,
    whose ``app.state`` holds the uploads' path and the rate limits); returns their sessions."""
    uploads = app.state.uploads
    per_key, failures, counters = app.state.per_key, app.state.failures, app.state.counters
    sessions = Sessions(settings.api_session_secret)
    env = environment()
    variants = [cls.name for cls in VARIANTS]

    def root(request: Request) -> str:
        return str(request.scope.get("root_path", ""))

    def render(
        request: Request,
        template: str,
        context: dict[str, Any],
        status: int = 200,
        session: Session | None = None,
    ) -> HTMLResponse:
        context = {
            "root": root(request),
            "title": "",
            "me": session.caller if session else None,
            "csrf": session.csrf if session else "",
            "poll": None,
            **context,
        }
        body = env.get_template(template).render(context)
        return HTMLResponse(body, status, headers=SECURITY_HEADERS)

    def error_page(request: Request, exc: PageError, session: Session | None = None) -> HTMLResponse:
        titles = {400: "Bad request", 403: "Forbidden", 404: "Not found", 409: "Conflict", 413: "Too large"}
        titles |= {422: "Refused", 429: "Too many requests"}
        context = {"title": titles.get(exc.status, "Error"), "status": exc.status, "message": exc.message}
        response = render(request, "error.html", context, exc.status, session)
        response.headers.update(exc.headers or {})
        return response

    def clear_session(request: Request, response: Response) -> Response:
        response.delete_cookie(
            SESSION_COOKIE,
            path=f"{root(request)}/account",
            secure=_https(request),
            httponly=True,
            samesite="strict",
        )
        return response

    def signed_in(request: Request) -> Session | None:
        """The request's live session (its key not revoked), having spent one of the key's tokens."""
        session = _quiet_session(request)
        if session is None:
            return None
        if not per_key.take(session.caller.key_id):
            counters.rate_limited += 1
            raise PageError(
                429,
                f"more than {settings.api_rate_per_s} requests a second with this key",
                {"Retry-After": str(per_key.retry_after(session.caller.key_id))},
            )
        return session

    async def session_of(request: Request) -> Session:
        session = await run_in_threadpool(signed_in, request)
        if session is None:
            raise _SignIn
        return session

    async def posted(request: Request) -> tuple[Session, dict[str, str]]:
        """A button's form: its session and fields, once its anti-forgery value and origin are right."""
        session = await session_of(request)
        form = await _small_form(request)
        if not (same_origin(request) and _matches(session.csrf, form.get("csrf", ""))):
            raise PageError(403, "this form was not sent from your account's page: open it and try again")
        return session, form

    def page(handler: Any) -> Any:
        """A page's handler with its errors as pages and a browser without a session sent to sign in."""

        async def run(request: Request) -> Response:
            try:
                return await handler(request)  # type: ignore[no-any-return]
            except _SignIn:
                if request.method == "GET" and request.url.path.endswith(".json"):
                    return JSONResponse({"error": "sign in", "status": 401}, 401, headers=SECURITY_HEADERS)
                return clear_session(request, RedirectResponse(f"{root(request)}/account/signin", 303))
            except PageError as exc:
                return error_page(request, exc, await run_in_threadpool(_quiet_session, request))
            except repo.NotFoundError as exc:
                return error_page(
                    request, PageError(404, str(exc)), await run_in_threadpool(_quiet_session, request)
                )

        run.__name__ = handler.__name__
        return run

    def _quiet_session(request: Request) -> Session | None:
        value = request.cookies.get(SESSION_COOKIE)
        key_id = sessions.key_id(value)
        caller = live_caller(engine, key_id) if key_id else None
        return None if caller is None or value is None else Session(caller, sessions.csrf(value))

    # -- signing in and out --

    def signin_page(request: Request, failed: bool = False, status: int = 200) -> Response:
        token = request.cookies.get(SIGNIN_COOKIE) or secrets.token_urlsafe(24)
        if len(token) > 100:
            token = secrets.token_urlsafe(24)
        response = render(
            request, "signin.html", {"title": "Sign in", "failed": failed, "form_token": token}, status
        )
        response.set_cookie(
            SIGNIN_COOKIE,
            token,
            max_age=3600,
            path=f"{root(request)}/account",
            secure=_https(request),
            httponly=True,
            samesite="strict",
        )
        return response

    @page
    async def signin_form(request: Request) -> Response:
        return signin_page(request)

    @page
    async def signin(request: Request) -> Response:
        """A key for a session; a wrong one is a 401 that says nothing more, past the address's
        allowance a 429; a form from elsewhere a 403."""
        form = await _small_form(request)
        if not (
            same_origin(request) and _matches(request.cookies.get(SIGNIN_COOKIE, ""), form.get("form", ""))
        ):
            raise PageError(
                403, "this sign-in form was not sent from this site's sign-in page: open it again"
            )
        key = form.get("key", "").strip()
        found = await run_in_threadpool(accounts.authenticate, engine, key) if key else None
        address = request.client.host if request.client else "unknown"
        if found is None:
            counters.refused_keys += 1
            key_id = accounts._key_id_of(key)[:16] if key else "-"
            if not failures.take(address):
                counters.rate_limited += 1
                log.warning("web sign-in with key %s from %s refused: rate-limited", key_id, address)
                raise PageError(
                    429,
                    "too many sign-ins with a wrong key from this address",
                    {"Retry-After": str(failures.retry_after(address))},
                )
            log.warning("web sign-in with key %s from %s refused", key_id, address)
            return signin_page(request, failed=True, status=401)
        log.info("web sign-in of %s with key %s from %s", found.account, found.key_id, address)
        response = RedirectResponse(f"{root(request)}/account", 303)
        response.set_cookie(
            SESSION_COOKIE,
            sessions.new(found.key_id),
            max_age=SESSION_SECONDS,
            path=f"{root(request)}/account",
            secure=_https(request),
            httponly=True,
            samesite="strict",
        )
        response.delete_cookie(SIGNIN_COOKIE, path=f"{root(request)}/account")
        return response

    @page
    async def signout(request: Request) -> Response:
        await posted(request)
        sessions.end(request.cookies.get(SESSION_COOKIE))
        return clear_session(request, RedirectResponse(f"{root(request)}/account/signin", 303))

    # -- the account's pages --

    def overview(session: Session) -> dict[str, Any]:
        who = session.caller
        since = _midnight()
        return {
            "versions": repo.owned_versions(engine, who.account_id),
            "submissions": repo.list_submissions(engine, who.account_id, limit=50),
            "used": repo.submissions_since(engine, who.account_id, since),
            "per_day": settings.api_submissions_per_day,
            "active_max": settings.api_active_per_account,
            "competitions": [
                c
                | {
                    "entered": repo.has_entered(
                        engine, repo.find_competition(engine, c["name"]).id, who.account_id
                    )
                }
                for c in repo.list_competitions(engine)
            ],
        }

    @page
    async def enter(request: Request) -> Response:
        """The Enter button of a competition (as ``POST /v1/competitions/{name}/entries``)."""
        session, form = await posted(request)
        try:
            await run_in_threadpool(
                competitions.enter, engine, form.get("competition", ""), session.caller.account_id
            )
        except repo.ConflictError as exc:
            raise PageError(409, str(exc)) from None
        return RedirectResponse(f"{root(request)}/account", 303)

    @page
    async def home(request: Request) -> Response:
        session = await session_of(request)
        shown = await run_in_threadpool(overview, session)
        pending = sum(s["status"] == "pending" for s in shown["submissions"])
        poll = {"url": f"{root(request)}/account/state.json", "state": str(pending)} if pending else None
        context = shown | {"title": session.caller.display_name, "poll": poll, "done": request.query_params}
        return render(request, "account.html", context, session=session)

    @page
    async def state(request: Request) -> Response:
        """How many of the account's submissions are pending (the overview reloads when it changes)."""
        session = await session_of(request)
        listed = await run_in_threadpool(repo.list_submissions, engine, session.caller.account_id, limit=50)
        pending = sum(s["status"] == "pending" for s in listed)
        return JSONResponse({"state": str(pending)}, headers=SECURITY_HEADERS)

    def submission_id(request: Request) -> int:
        raw = request.path_params["submission_id"]
        if not raw.isdigit() or len(raw) > 12:
            raise PageError(404, f"no submission {raw[:40]!r}")
        return int(raw)

    @page
    async def submission(request: Request) -> Response:
        session = await session_of(request)
        number = submission_id(request)
        shown = await run_in_threadpool(repo.submission, engine, session.caller.account_id, number)
        poll = None
        if shown["status"] == "pending":
            poll = {"url": f"{root(request)}/account/submissions/{number}/state.json", "state": "pending"}
        context = {
            "title": f"Submission {number}",
            "s": shown,
            "report": shown.get("report") or {},
            "poll": poll,
        }
        return render(request, "submission.html", context, session=session)

    @page
    async def submission_state(request: Request) -> Response:
        session = await session_of(request)
        shown = await run_in_threadpool(
            repo.submission, engine, session.caller.account_id, submission_id(request), logs=False
        )
        return JSONResponse({"state": shown["status"], "version": shown["version"]}, headers=SECURITY_HEADERS)

    @page
    async def submission_transcript(request: Request) -> Response:
        session = await session_of(request)
        number = submission_id(request)
        shown = await run_in_threadpool(repo.submission, engine, session.caller.account_id, number)
        if not shown.get("transcript"):
            raise PageError(404, f"submission {number} has no transcript")
        return Response(shown["transcript"], media_type="application/json", headers=SECURITY_HEADERS)

    @page
    async def match_transcript(request: Request) -> Response:
        session = await session_of(request)
        raw = request.path_params["match_id"]
        if not raw.isdigit() or len(raw) > 12:
            raise PageError(404, f"no match {raw[:40]!r}")
        body = await run_in_threadpool(repo.owned_transcript, engine, session.caller.account_id, int(raw))
        return Response(body, media_type="application/json", headers=SECURITY_HEADERS)

    @page
    async def version(request: Request) -> Response:
        session = await session_of(request)
        ref = request.path_params["version"]
        who = session.caller
        faults = await run_in_threadpool(repo.owned_faults, engine, who.account_id, ref)
        for seat in faults:
            if isinstance(seat["detail"], str):
                seat["detail"] = parse_detail(seat["detail"])
            stored = (seat["detail"] or {}).get("exit")
            seat["exit"] = None
            if isinstance(stored, dict):
                seat["exit"] = {"how": describe_exit(stored), "stderr": str(stored.get("stderr") or "")}
        mine = await run_in_threadpool(repo.owned_versions, engine, who.account_id)
        shown = next((v for v in mine if v["version"] == ref), None)
        if shown is None:
            raise PageError(404, f"no version {ref[:80]!r}")
        context = {"title": ref, "v": shown, "faults": faults, "active_max": settings.api_active_per_account}
        return render(request, "version.html", context, session=session)

    async def switch(request: Request, active: bool) -> Response:
        session, form = await posted(request)
        ref = form.get("version", "")
        try:
            if active:  # as POST /v1/versions/{ref}/activate: the limit of the competitions entered first
                await run_in_threadpool(competitions.check_activation, engine, session.caller.account_id, ref)
            await run_in_threadpool(
                repo.set_active,
                engine,
                session.caller.account_id,
                ref,
                active,
                max_active=settings.api_active_per_account,
            )
        except repo.ConflictError as exc:
            raise PageError(409, str(exc)) from None
        return RedirectResponse(f"{root(request)}/account", 303)

    @page
    async def activate(request: Request) -> Response:
        return await switch(request, True)

    @page
    async def deactivate(request: Request) -> Response:
        return await switch(request, False)

    # -- uploading --

    @page
    async def upload_form(request: Request) -> Response:
        session = await session_of(request)
        context = {
            "title": "Upload a bot",
            "variants": variants,
            "kinds": forms.KINDS,
            "max_bytes": settings.bot_max_bytes,
            "max_files": settings.submit_max_files,
            "competitions": [
                c["name"]
                for c in await run_in_threadpool(repo.list_competitions, engine)
                if c["state"] == "season"
            ],
        }
        return render(request, "upload.html", context, session=session)

    @page
    async def upload(request: Request) -> Response:
        """The upload form: its file as the API's archive, through the API's one path for uploads."""
        session = await session_of(request)
        who = session.caller
        if not same_origin(request):
            raise PageError(403, "this form was not sent from your account's page: open it and try again")
        limit = uploads.limit
        declared = request.headers.get("content-length")
        too_big = declared is not None and (not declared.isdigit() or int(declared) > limit + FORM_SLACK)
        cap = FORM_SLACK if too_big else limit + FORM_SLACK
        body, complete = b"", True
        async for chunk in request.stream():  # never more than the cap is read
            body += chunk
            if len(body) > cap:
                body, complete = body[:cap], False
                break
        try:
            form = forms.parse_multipart(
                body, forms.boundary_of(request.headers.get("content-type")), complete=complete
            )
        except forms.FormError as exc:
            raise PageError(400, str(exc)) from None
        # The anti-forgery value first: a forged form is refused before anything is stored.
        if not _matches(session.csrf, form.fields.get("csrf", "")):
            raise PageError(403, "this form was not sent from your account's page: open it and try again")
        name = form.fields.get("name", "").strip()
        variant = form.fields.get("variant", "classic").strip() or "classic"
        entry = form.fields.get("entry", "").strip() or None
        wanted = form.fields.get("competition", "").strip()
        try:
            entered = None
            if wanted:  # as POST /v1/submissions?competition=: frozen, another variant, its quota; entered
                entered = await run_in_threadpool(
                    competitions.check_submission, engine, wanted, who.account_id, variant
                )
            if not complete:
                reason = f"the upload is larger than {limit} bytes"
                await uploads.refuse(who, name, variant, reason)
                raise PageError(413, f"{reason}; the limit is {limit}")
            await uploads.check_quota(who)
            filename, content = form.files.get("file", ("", b""))
            if not filename:
                raise PageError(400, "choose a file to upload")
            try:
                archive = await run_in_threadpool(
                    forms.as_tar, filename, content, limit=limit, limits=_limits(settings)
                )
            except forms.TooLarge as exc:
                await uploads.refuse(who, name, variant, str(exc))
                raise PageError(413, str(exc)) from None
            except forms.SubmissionError as exc:
                await uploads.refuse(who, name, variant, str(exc))
                raise PageError(422, str(exc)) from None
            sent = await uploads.accept(who, name, variant, entry, archive)
            if entered is not None:
                await run_in_threadpool(repo.set_submission_competition, engine, sent["id"], entered.id)
        except repo.ConflictError as exc:  # the name is another account's; the quota, counted at the store
            raise PageError(429 if isinstance(exc, repo.QuotaError) else 409, str(exc)) from None
        except ApiError as exc:
            raise PageError(exc.status, exc.message, exc.headers) from None
        return RedirectResponse(f"{root(request)}/account/submissions/{sent['id']}", 303)

    routes: list[tuple[str, Any, list[str]]] = [
        ("/account", home, ["GET"]),
        ("/account/state.json", state, ["GET"]),
        ("/account/signin", signin_form, ["GET"]),
        ("/account/signin", signin, ["POST"]),
        ("/account/signout", signout, ["POST"]),
        ("/account/upload", upload_form, ["GET"]),
        ("/account/upload", upload, ["POST"]),
        ("/account/submissions/{submission_id}", submission, ["GET"]),
        ("/account/submissions/{submission_id}/state.json", submission_state, ["GET"]),
        ("/account/submissions/{submission_id}/transcript", submission_transcript, ["GET"]),
        ("/account/matches/{match_id}/transcript", match_transcript, ["GET"]),
        ("/account/activate", activate, ["POST"]),
        ("/account/enter", enter, ["POST"]),
        ("/account/deactivate", deactivate, ["POST"]),
        ("/account/versions/{version:path}", version, ["GET"]),
    ]
    for path, handler, methods in routes:
        app.add_api_route(path, handler, methods=methods, include_in_schema=False)
    app.mount("/account/static", StaticFiles(directory=STATIC), name="account-static")
    return sessions


class _SignIn(Exception):
    """No live session: to the sign-in page."""


def _limits(settings: Settings) -> forms.SubmissionLimits:
    return forms.SubmissionLimits.from_settings(settings)


def _midnight() -> dt.datetime:
    return dt.datetime.now(dt.UTC).replace(hour=0, minute=0, second=0, microsecond=0)
