"""The local table's server (``sixnimmt play --human``): its routes, methods and headers, over HTTP."""

from __future__ import annotations

import http.client
import json
from pathlib import Path

from humankit import local_table


def _request(url: str, method: str, path: str, body: bytes = b"", headers: dict[str, str] | None = None):
    host, port = url.removeprefix("http://").rstrip("/").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=60)
    try:
        connection.request(method, path, body=body or None, headers=headers or {})
        response = connection.getresponse()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        connection.close()


def test_the_local_server_routes_methods_and_headers(tmp_path: Path) -> None:
    with local_table(("random", "random"), transcripts=tmp_path) as table:
        url = table.url
        status, headers, _ = _request(url, "GET", "/")
        assert status == 302 and headers["location"] == "/seats/0"
        status, headers, body = _request(url, "GET", "/seats/0")
        assert status == 200 and b'id="play"' in body and b"/api/seats/0/state" in body
        assert "script-src 'self'" in headers["content-security-policy"]
        assert headers["cache-control"] == "no-store" and headers["x-frame-options"] == "DENY"
        assert b"<script>" not in body and b" style=" not in body  # nothing inline: the CSP forbids it
        status, headers, body = _request(url, "GET", "/static/play.js")
        assert status == 200 and headers["content-type"].startswith("text/javascript") and b"fetch(" in body
        status, _, body = _request(url, "GET", "/api/seats/0/state")
        assert status == 200 and json.loads(body)["state"]["entrant"] == "human:ann"
        assert _request(url, "GET", "/seats/1")[0] == 404
        assert _request(url, "GET", "/api/seats/1/state")[0] == 404
        assert _request(url, "GET", "/api/seats/0/choose")[0] == 404
        assert _request(url, "POST", "/seats/0", b"{}", {"Content-Type": "application/json"})[0] == 405
        status, _, body = _request(url, "POST", "/api/seats/0/choose", b"x=1", {"Content-Type": "text/plain"})
        assert status == 415
        # Another name for 127.0.0.1 (DNS rebinding) is refused: a web page must not play here.
        port = url.rstrip("/").rsplit(":", 1)[1]
        assert _request(url, "GET", "/seats/0", headers={"Host": f"evil.example:{port}"})[0] == 400
        assert _request(url, "GET", "/api/seats/0/state", headers={"Host": f"localhost:{port}"})[0] == 200
