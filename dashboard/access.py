"""Who is looking at the dashboard, and which seats' logs they may read.

A seat's fault details (the referee's reasons, how its bot process ended, the end of its stderr)
hold whatever a bot printed, even code it read: only the operator reads them. Everyone sees each
seat's fault kinds and counts.

The operator proves it with the token of ``SIXNIMMT_DASHBOARD_OPERATOR_TOKEN``: sent as
``Authorization: Bearer TOKEN`` on any request, or once to the sign-in form, which answers with a
session cookie. The cookie holds an expiry and a random nonce signed with a key derived from the
token (HMAC-SHA256), never the token itself, so every replica with the same token accepts it and a
new token ends every session. Without a token set, nobody is the operator on the dashboard.

Pure, without Starlette: :mod:`dashboard.app` calls it at its edges.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

SESSION_COOKIE = "sixnimmt_operator"
SESSION_SECONDS = 12 * 3600
"""How long a sign-in lasts; signing out removes the cookie from the browser, not the session."""

MIN_TOKEN_CHARS = 16
"""A shorter operator token is refused at start: it could be guessed through the sign-in form."""

_SESSION_KEY_LABEL = b"sixnimmt dashboard operator session v1"


class Unauthorized(Exception):
    """Credentials were presented and are wrong (a 401, which says nothing more)."""


class TokenTooShortError(ValueError):
    """The configured operator token is shorter than :data:`MIN_TOKEN_CHARS`."""


@dataclass(frozen=True, slots=True)
class Viewer:
    """Whoever made a request, as far as the dashboard knows."""

    operator: bool = False

    def may_read_logs(self, seat: Mapping[str, Any]) -> bool:
        """Whether this viewer may read ``seat``'s fault details (reasons, exit, stderr).

        The one place that decides: once accounts own bots, a signed-in owner of
        ``seat["bot_id"]`` reads that seat's too (this class then carries the account).
        """
        return self.operator

    def may_read_errors(self) -> bool:
        """Whether this viewer may read failed blocks' errors: worker and referee exceptions, which
        can name hosts, paths and the store's own errors. The operator's alone."""
        return self.operator


ANONYMOUS = Viewer()
OPERATOR = Viewer(operator=True)


def redact(seats: list[dict[str, Any]], viewer: Viewer) -> list[dict[str, Any]]:
    """``seats`` (of one match) without the fault details ``viewer`` may not read.

    What stays for everyone: each seat's ``faults`` (the count) and ``fault_kinds`` (count by kind).
    """
    return [
        s if viewer.may_read_logs(s) else {k: v for k, v in s.items() if k != "fault_detail"} for s in seats
    ]


def _digest(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).digest()


class OperatorAuth:
    """Checks the operator's token and the session cookies made from it."""

    def __init__(self, token: str, clock: Callable[[], float] = time.time) -> None:
        if token and len(token) < MIN_TOKEN_CHARS:
            raise TokenTooShortError(
                f"SIXNIMMT_DASHBOARD_OPERATOR_TOKEN must be at least {MIN_TOKEN_CHARS} characters"
                " (e.g. openssl rand -hex 24)"
            )
        # Only digests are kept: the token's and the sessions' key.
        self._token = _digest(token) if token else None
        self._key = hmac.new(_digest(token), _SESSION_KEY_LABEL, hashlib.sha256).digest() if token else None
        self._clock = clock

    @property
    def enabled(self) -> bool:
        """Whether an operator token is configured (without one, nobody signs in)."""
        return self._token is not None

    def token_matches(self, presented: str) -> bool:
        """Whether ``presented`` is the operator's token (in time independent of both)."""
        if self._token is None:
            return False
        return hmac.compare_digest(_digest(presented), self._token)

    def new_session(self) -> str:
        """A session cookie's value: ``EXPIRES.NONCE.SIGNATURE``."""
        assert self._key is not None, "no operator token: no sessions"
        body = f"{int(self._clock()) + SESSION_SECONDS}.{secrets.token_urlsafe(16)}"
        return f"{body}.{self._sign(body)}"

    def session_valid(self, value: str) -> bool:
        """Whether ``value`` is a session this token signed that has not expired."""
        if self._key is None or len(value) > 200:
            return False
        body, _, signature = value.rpartition(".")
        expires, _, nonce = body.partition(".")
        if not (expires.isdigit() and len(expires) <= 12 and nonce):
            return False
        if not hmac.compare_digest(self._sign(body).encode(), signature.encode("utf-8", "replace")):
            return False
        return int(expires) > self._clock()

    def _sign(self, body: str) -> str:
        assert self._key is not None
        return hmac.new(self._key, body.encode(), hashlib.sha256).hexdigest()

    def viewer(self, authorization: str | None, session: str | None) -> Viewer:
        """Who presents this ``Authorization`` header and session cookie.

        A header is checked first and must be right: a wrong token (or a scheme other than Bearer)
        raises :class:`Unauthorized`, never falls back to the anonymous view. A cookie that is not
        a valid session (expired, from an older token) is ignored: its holder is anonymous.
        """
        if authorization is not None:
            scheme, _, credentials = authorization.strip().partition(" ")
            if scheme.lower() != "bearer" or not self.token_matches(credentials.strip()):
                raise Unauthorized
            return OPERATOR
        if session and self.session_valid(session):
            return OPERATOR
        return ANONYMOUS


def local_path(target: str | None, root: str = "") -> str:
    """Where to go after signing in: ``target`` if it is a path of this site, else the root.

    Refuses what a browser would take to another site (``//host``, ``/\\host``, ``https:…``).
    """
    if not target or not target.startswith("/") or target.startswith(("//", "/\\")):
        return f"{root}/"
    if any(c in target for c in "\\\r\n\t") or any(ord(c) < 32 for c in target):
        return f"{root}/"
    return target
