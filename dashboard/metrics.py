"""Every Prometheus metric of the dashboard, and the middleware that counts its requests.

Labels are bounded: the route is the template the request matched (``/leagues/{league_id:int}``,
never the id), the method one of a few, the status the response code.
"""

from __future__ import annotations

import time
from typing import Any

from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, Counter, Histogram, generate_latest

REQUESTS = Counter(
    "sixnimmt_dashboard_requests_total",
    "HTTP requests the dashboard answered, by route template, method and status code.",
    ["route", "method", "status"],
)
REQUEST_SECONDS = Histogram(
    "sixnimmt_dashboard_request_duration_seconds",
    "Time to answer an HTTP request of the dashboard, by route template and method.",
    ["route", "method"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0),
)

METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
UNMATCHED = "unmatched"
"""The route label of a request no route matched (an unknown path, a 404 of the router)."""


def route_label(scope: dict[str, Any]) -> str:
    """The template of the route that handled the request (set by Starlette's router)."""
    route = scope.get("route")
    path = getattr(route, "path", None)
    return str(path) if path else UNMATCHED


def exposition() -> tuple[bytes, str]:
    """The metrics in the Prometheus text format, and its content type."""
    return generate_latest(REGISTRY), CONTENT_TYPE_LATEST


class MetricsMiddleware:
    """ASGI middleware: counts and times every HTTP request by route template."""

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
