"""The play page's requests as plain functions: a :class:`~dashboard.table.seat.Seat` and the
request in, a :data:`~dashboard.view.Response` (status, content type, body, extra headers) out.

No web framework: the local server (:mod:`dashboard.table.local`) and the dashboard's app serve
the same functions. A seat's page lives at some address of the server's choosing; its API is two
addresses the page is given (``api``): ``GET {api}/state?after=V&wait=S`` (a long poll: the state
once its version is not ``V``, or after ``S`` seconds) and ``POST {api}/choose`` with the JSON
``{"request_id": N, "index": I}``. :func:`state` blocks while it waits: an asynchronous server
runs it on a thread.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

import jinja2

from dashboard import pages
from dashboard.table.seat import Seat, SeatError
from dashboard.view import Response

POLL_MAX_S = 20.0
"""The longest a state request waits for a change (a page asks again at once)."""

MAX_CHOICE_BYTES = 1024
"""The largest choice body read."""

KIND_WORDS = {
    "card": "Choose a card to play",
    "row": "Choose the row you take",
    "card_row": "Choose a card and where it goes",
    "cards": "Choose the cards to play",
    "luck": "Play a luck card, or pass",
    "action_card": "Play a special card, or pass",
    "pile": "Choose a pile",
}
"""What the page asks for each decision kind (others: "Your decision")."""


@lru_cache(maxsize=1)
def environment() -> jinja2.Environment:
    """The dashboard's template environment (one per process)."""
    return pages.environment()


def page(
    seat: Seat,
    *,
    api: str,
    root: str = "",
    layout: str = "_play_base.html",
    title: str = "",
    **context: Any,
) -> Response:
    """The play page of ``seat`` (``layout``: the template it extends, with ``context``)."""
    seat.seen()
    state = seat.state()
    body = (
        environment()
        .get_template("play.html")
        .render(
            root=root,
            layout=layout,
            title=title or f"{state['entrant']} at the table",
            api=api,
            state=state,
            table=fragment(state, root),
            **context,
        )
    )
    return 200, "text/html; charset=utf-8", body.encode(), {}


def fragment(state: Mapping[str, Any], root: str = "") -> str:
    """The table part of the page for ``state``: the part that changes, swapped in by play.js."""
    return (
        environment()
        .get_template("_play_table.html")
        .render(
            root=root, s=state, bd=state["board"], bulls=state["bulls"], costs_shown=True, asks=KIND_WORDS
        )
    )


def state(seat: Seat, query: Mapping[str, Sequence[str]], root: str = "") -> Response:
    """``GET {api}/state?after=V&wait=S``: ``{"state": …, "html": …}`` once the state's version is
    not ``V`` (at once without ``after``), waiting ``S`` seconds at most (default and bound:
    :data:`POLL_MAX_S`, and half the seat's grace period, so that a live page is always seen)."""
    try:
        after = _number(query, "after")
        wait = _number(query, "wait")
    except ValueError as exc:
        return _json({"error": str(exc)}, 400)
    timeout = min(POLL_MAX_S, seat.grace_s / 2, POLL_MAX_S if wait is None else wait)
    current = seat.wait(after, timeout)
    return _json({"state": current, "html": fragment(current, root)})


def choose(seat: Seat, body: bytes, content_type: str | None) -> Response:
    """``POST {api}/choose`` with ``{"request_id": N, "index": I}``: the person's choice among the
    pending decision's options (counted from 0). A choice that is not one of the options offered
    now is refused (409) with the reason; a body that is not such JSON is a 400.

    Only ``application/json`` is read: a page of another site cannot send that without the
    browser's preflight, which this server never answers.
    """
    if (content_type or "").split(";")[0].strip().lower() != "application/json":
        return _json({"error": "send the choice as application/json"}, 415)
    if len(body) > MAX_CHOICE_BYTES:
        return _json({"error": "the choice is too large"}, 413)
    try:
        data = json.loads(body)
        request_id, index = data["request_id"], data["index"]
        if type(request_id) is not int or type(index) is not int:
            raise TypeError
    except (ValueError, TypeError, KeyError):
        return _json({"error": 'send {"request_id": N, "index": I} with two whole numbers'}, 400)
    try:
        return _json(seat.choose(request_id, index))
    except SeatError as exc:
        return _json({"error": str(exc)}, 409)


def _number(query: Mapping[str, Sequence[str]], name: str) -> int | None:
    values = query.get(name)
    raw = values[-1] if values else ""
    if raw == "":
        return None
    if not raw.isdigit() or len(raw) > 12:
        raise ValueError(f"{name} must be a whole number")
    return int(raw)


def _json(value: Any, status: int = 200) -> Response:
    return status, "application/json", json.dumps(value).encode(), {}
