"""The API's Prometheus metrics and its ``/metrics`` (docs/api.md, "Operations").

- ``sixnimmt_api_requests_total{route,method,status}`` and ``sixnimmt_api_request_duration_seconds``:
  every request, by the template of the route it matched (``/v1/submissions/{submission_id}``,
  never an id; ``unmatched`` for no route), as the dashboard counts its own;
- ``sixnimmt_api_submissions_total{outcome}``: uploads by what became of them (accepted: stored
  pending and queued for validation; refused: past a limit or not a bot, 400/409/413/422; limited:
  the daily quota or the rate, 429; unauthorized: no live key; failed: the server's 5xx);
- ``sixnimmt_validations_total{outcome}`` and ``sixnimmt_validation_duration_seconds``
  (:mod:`workers.queue.validating`): the validations this process ran on its threads; with a
  broker the workers run them, and their ``/metrics`` has them;
- ``sixnimmt_api_pending_validations``: submissions pending their validation, read from the store
  at each scrape (the queue of validations, whoever runs them).

One API process serves one registry (the process's default); ``/metrics`` is not under ``/v1/``,
so an ingress that routes ``/v1`` only does not publish it.
"""

from __future__ import annotations

import time
from typing import Any

from fastapi import FastAPI
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, Counter, Gauge, Histogram, generate_latest
from sqlalchemy import Engine
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response

REQUESTS = Counter(
    "sixnimmt_api_requests_total",
    "HTTP requests the API answered, by route template, method and status code.",
    ["route", "method", "status"],
)
REQUEST_SECONDS = Histogram(
    "sixnimmt_api_request_duration_seconds",
    "Time to answer an HTTP request of the API, by route template and method.",
    ["route", "method"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0),
)
SUBMISSIONS = Counter(
    "sixnimmt_api_submissions_total",
    "Uploads of bots, by outcome (accepted, refused, limited, unauthorized, failed).",
    ["outcome"],
)
PENDING = Gauge(
    "sixnimmt_api_pending_validations",
    "Submissions waiting for their validation (read from the store at each scrape).",
)
OUTCOMES = ("accepted", "refused", "limited", "unauthorized", "failed")
for _outcome in OUTCOMES:  # every series exists from the start, at 0
    SUBMISSIONS.labels(_outcome)

METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
UNMATCHED = "unmatched"
UPLOADS = frozenset({("POST", "/v1/submissions"), ("POST", "/account/upload")})
"""The routes that take an upload (method, template): the API's and the web pages' form (its success
is a 303 to the submission's page)."""


def outcome(status: int) -> str | None:
    """What an upload's response status says became of it (``None``: not an upload's answer)."""
    if status < 400:
        return "accepted"
    if status in (401, 403):
        return "unauthorized"
    if status == 429:
        return "limited"
    if status >= 500:
        return "failed"
    if status in (400, 409, 413, 422):
        return "refused"
    return None


def route_label(scope: dict[str, Any]) -> str:
    """The template of the route that handled the request (set by the router)."""
    path = getattr(scope.get("route"), "path", None)
    return str(path) if path else UNMATCHED


class MetricsMiddleware:
    """ASGI middleware: counts and times every HTTP request by route template, and the uploads."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500

        async def send_wrapper(message: dict[str, Any]) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, send_wrapper)
        finally:
            method = scope.get("method", "GET")
            method = method if method in METHODS else "other"
            route = route_label(scope)
            REQUESTS.labels(route, method, str(status)).inc()
            REQUEST_SECONDS.labels(route, method).observe(time.perf_counter() - started)
            if (method, route) in UPLOADS and (result := outcome(status)) is not None:
                SUBMISSIONS.labels(result).inc()


def instrument(app: FastAPI, engine: Engine) -> None:
    """Count ``app``'s requests and serve ``GET /metrics`` (the Prometheus text format)."""
    app.add_middleware(MetricsMiddleware)

    @app.get("/metrics", include_in_schema=False)
    async def metrics(request: Request) -> Response:
        from workers.queue import validating  # its metrics: the validations this process ran

        PENDING.set(await run_in_threadpool(validating.pending, engine))
        return Response(generate_latest(REGISTRY), media_type=CONTENT_TYPE_LATEST)
